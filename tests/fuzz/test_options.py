"""``-o``/``--evaluator-option``/``--space-option``/``--build-option`` values and the
search arguments next to them: parsed, validated, and given to the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.cases import (
    Case,
    build_option_case,
    one_shot_option_case,
    option_case,
    py_options_case,
    search_args_case,
)
from fuzz.properties import assert_case_ok, fuzz_settings
from fuzz.source import STRUCTURAL, HypothesisSource
from fuzz.templates import Templates


@pytest.mark.slow
@fuzz_settings(200, shrink=True)
@given(items=st.lists(st.text(alphabet=STRUCTURAL + "é\x00", max_size=30), max_size=3))
def test_parse_options_returns_a_dict_or_refuses(items: list[str]) -> None:
    """Any text after ``-o`` gives a dict of str keys, or a NasforgeError."""
    from nasforge.tools.cli.options import parse_options

    def call() -> None:
        options = parse_options(items)
        assert isinstance(options, dict) and all(isinstance(k, str) for k in options)

    assert_case_ok(Case("py: options", call=call, call_text=f"parse_options({items!r})"))


@pytest.mark.slow
@fuzz_settings(150, shrink=True)
@given(data=st.data())
def test_strategy_options_build_or_refuse(templates: Templates, data: st.DataObject) -> None:
    """Options reach a constructed strategy (ask/tell via the spec, one-shot via its config)."""
    assert_case_ok(py_options_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(50)
@given(data=st.data())
def test_cli_strategy_and_evaluator_options(templates: Templates, data: st.DataObject) -> None:
    """``-o``, ``--evaluator-option`` and ``--space-option`` of fast ask/tell searches."""
    assert_case_ok(option_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(40)
@given(data=st.data())
def test_cli_search_arguments(templates: Templates, data: st.DataObject) -> None:
    """Budgets, seeds, workers, executors, datasets and names of ``search``."""
    assert_case_ok(search_args_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(40)
@given(data=st.data())
def test_cli_build_options(templates: Templates, data: st.DataObject) -> None:
    """``--build-option`` through ``score`` and ``export`` into ``space.build``."""
    assert_case_ok(build_option_case(HypothesisSource(data), templates))


@fuzz_settings(6)
@given(data=st.data())
def test_cli_one_shot_options(templates: Templates, data: st.DataObject) -> None:
    """A few one-shot options: each valid one trains a tiny supernet, so only a few."""
    assert_case_ok(one_shot_option_case(HypothesisSource(data), templates))

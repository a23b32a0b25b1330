"""Genotype strings of every space: parsed by the library, and given to the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.cases import Case, genotype_string_case, parse_case, py_parse_case
from fuzz.properties import assert_case_ok, fuzz_settings
from fuzz.source import HypothesisSource
from fuzz.templates import Templates


@pytest.mark.slow
@pytest.mark.parametrize("space", ["nb201", "darts", "toy"])
@fuzz_settings(150, shrink=True)
@given(data=st.data())
def test_parse_returns_a_valid_genotype_or_refuses(
    templates: Templates, space: str, data: st.DataObject
) -> None:
    """``space.parse`` returns a genotype that round-trips, or raises a NasforgeError."""
    assert_case_ok(py_parse_case(HypothesisSource(data), templates, space))


@pytest.mark.slow
@fuzz_settings(60)
@given(data=st.data())
def test_cli_genotype_string_exits_0_or_one_line(templates: Templates, data: st.DataObject) -> None:
    """``export STRING`` and ``score STRING``: exit 0, or exit 2 with one line and no new files."""
    assert_case_ok(genotype_string_case(HypothesisSource(data), templates))


@pytest.mark.parametrize(
    "text",
    [
        "Genotype(normal=[], normal_concat=range(0, 1000000000000), reduce=[], reduce_concat=[2, 3, 4, 5])",
        "Genotype(normal=[], normal_concat=range(2, 6, 0), reduce=[], reduce_concat=[2, 3, 4, 5])",
        "Genotype(normal=" + "(" * 100_000 + ", reduce=[])",
    ],
    ids=["huge-range", "zero-step-range", "deep-parentheses"],
)
def test_darts_strings_that_once_escaped_the_parser(templates: Templates, text: str) -> None:
    """Fixed examples (issue 8 item 7, and the fuzzer's): refused in one line, quickly."""
    assert_case_ok(parse_case(templates, "darts", text), timeout=20)
    assert_case_ok(
        Case("genotype string", ["export", "--space", "darts", "--no-onnx", "--out", "o", "--", text])
    )

"""Core defaults live in nasforge.run.defaults; a missing default plugin is one clear line (issue 9)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nasforge import NasforgeError
from nasforge.api import build_spec
from nasforge.kernel.registry import get_registry, load_registry
from nasforge.run import defaults
from tests.cli_run import one_line


@pytest.mark.slow
def test_search_without_the_nb201_plugin_names_the_missing_default(tmp_path) -> None:
    """`nasforge search` with no --space, its default space's plugin switched off."""
    env = {**os.environ, "NASFORGE_DISABLE_PLUGINS": "nb201", "NASFORGE_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "nasforge", "search", "-q", "--run-dir", str(tmp_path / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2, run.stderr
    line = one_line(run.stderr)
    assert f"the default space '{defaults.SPACE}' is not installed" in line and "--space" in line
    assert not (tmp_path / "run").exists(), "nothing is started for a run that cannot be built"


@pytest.mark.parametrize(
    ("disabled", "args", "kind", "name"),
    [
        ("nb201", (), "space", defaults.SPACE),
        ("search,optuna", (), "strategy", defaults.STRATEGY),
        ("nb201", ("toy", "random"), "evaluator", defaults.TABLE_EVALUATOR),
    ],
)
def test_build_spec_names_each_missing_default(disabled: str, args: tuple, kind: str, name: str) -> None:
    registry = load_registry(disabled=disabled.split(","))
    with pytest.raises(NasforgeError, match=f"default {kind} '{name}' is not installed"):
        build_spec(*args, registry=registry)


def test_named_components_need_no_default_plugin() -> None:
    spec = build_spec("toy", "random", "toy", trials=3, registry=load_registry(disabled=["nb201"]))
    assert (spec.space, spec.strategy, spec.evaluator) == ("toy", "random", "toy")


@pytest.mark.slow
@pytest.mark.parametrize("command", [("score", "--sample", "1"), ("correlate", "--sample", "2")])
def test_score_and_correlate_use_the_invocations_registry_and_name_the_missing_default(
    cli, monkeypatch, command: tuple
) -> None:
    """The CLI's entry point makes the registry every command uses: one without the nb201
    plugin makes both commands fail on their default space, in one line."""
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: load_registry(disabled=["nb201"]))
    cli(*command, "-q").assert_one_line_error(f"default space '{defaults.SPACE}'", "--space")


def test_the_defaults_are_what_an_unnamed_search_gets() -> None:
    ask_tell = build_spec()
    assert (ask_tell.space, ask_tell.strategy, ask_tell.evaluator) == (
        defaults.SPACE,
        defaults.default_strategy(get_registry()),
        defaults.TABLE_EVALUATOR,
    )
    assert ask_tell.benchmark_dataset == defaults.TABLE_DATASET and ask_tell.train_data is None
    one_shot = build_spec(defaults.SPACE, "darts")
    assert one_shot.train_data == defaults.TRAINING_DATASET and one_shot.evaluator is None


def test_the_default_strategy_is_the_best_installed(monkeypatch) -> None:
    """Optuna's TPE where its extra is installed (it measured best under the protocol),
    regularized evolution where it is not, or where its plugin is switched off."""
    pytest.importorskip("optuna")
    assert defaults.default_strategy(get_registry()) == "optuna-tpe"
    assert defaults.default_strategy(load_registry(disabled=["optuna"])) == "rea"
    monkeypatch.setitem(sys.modules, "optuna", None)  # the extra not installed
    assert defaults.default_strategy(get_registry()) == "rea"
    assert build_spec().strategy == "rea"

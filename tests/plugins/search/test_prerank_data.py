"""What prerank scores its pool on: the run's training data, handed over as data (never
through an option typed as a name), or the data ``score_data`` names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.registry import get_registry
from nasforge.run.budget import Budget
from nasforge.run.spec import ExperimentSpec

SMALL = {"metric": "params", "top_k": 2, "pool": 4, "cache": False}


def _strategy(*, train_data: str | None, **options: Any) -> Any:
    spec = ExperimentSpec(
        space="nb201",
        strategy="prerank",
        evaluator="short-train" if train_data else "nb201-table",
        budget=Budget(trials=2),
        train_data=train_data,
        strategy_options={**SMALL, **options},
        build_options={"C": 4, "N": 1},
    )
    _space, _evaluator, strategy, executor = spec.build(get_registry())
    executor.close()
    return strategy


def test_the_runs_training_data_arrives_as_data() -> None:
    strategy = _strategy(train_data="digits")
    data = strategy.settings.data
    assert isinstance(data, TensorData) and data.name == "digits" and data.input_shape == (1, 8, 8)
    assert strategy.settings.to_json()["data"].startswith("digits (digest ")


def test_a_run_without_data_ranks_on_gaussian_inputs() -> None:
    assert _strategy(train_data=None).settings.data == "gaussian"


def test_score_data_names_other_data_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    assert _strategy(train_data="digits", score_data="gaussian").settings.data == "gaussian"
    run = cli(
        "search", "--strategy", "prerank", "--evaluator", "nb201-table", "-o", "metric=params",
        "-o", "top_k=2", "-o", "pool=4", "-o", "cache=false", "-o", "score_data=digits",
        "--build-option", "in_channels=1", "--budget-trials", "2", "--run-dir", tmp_path / "r", "-q",
    )  # fmt: skip
    assert run.code == 0, run.err
    refused = cli("search", "--strategy", "prerank", "-o", "data=digits", "--budget-trials", "2")
    refused.assert_one_line_error("option 'data' is supplied by the run")


def test_an_unknown_score_data_is_refused_before_the_run_starts(cli: Any, tmp_path: Path) -> None:
    """Was refused at the first ask, after the run's start lines and its progress bar."""
    refused = cli(
        "search", "--strategy", "prerank", "--evaluator", "nb201-table", "-o", "score_data=nosuchdata",
        "--budget-trials", "2", "--run-dir", tmp_path / "r",
    )  # fmt: skip
    refused.assert_one_line_error("unknown dataset 'nosuchdata'")
    assert not (tmp_path / "r").exists()

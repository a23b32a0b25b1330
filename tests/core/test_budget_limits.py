"""A budget is a number a run can reach: infinite, NaN, boolean and astronomically large
budgets are refused in one line (they would run until killed), from the CLI and the
Python API alike; and a run on a finite space ends once every cell has been seen."""

from __future__ import annotations

import math

import pytest

from nasforge import Budget, BudgetError, NasforgeError, api

SEARCH = ["search", "--space", "nb201", "--strategy", "random", "--evaluator", "nb201-table", "-q"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags",
    [
        ["--budget-seconds", "inf"],
        ["--budget-seconds", "nan"],
        ["--budget-sim-seconds", "inf"],
        ["--budget-sim-seconds", "1e300"],
        ["--budget-trials", "99999999999999999999999"],
        ["--budget-trials", "10000000000000"],
        ["--budget-seconds", "1e300"],
    ],
)
def test_unreachable_budgets_are_refused_on_the_command_line(cli, tmp_path, flags: list[str]) -> None:
    run = cli(*SEARCH, *flags, "--run-dir", tmp_path / "run")
    run.assert_one_line_error("budget")
    assert not (tmp_path / "run").exists(), "no half-made run is left"


@pytest.mark.parametrize(
    "budget",
    [
        {"trials": math.inf},
        {"trials": 1e9 + 0.5},
        {"trials": 2.0},
        {"trials": True},
        {"trials": 10**20},
        {"seconds": math.inf},
        {"seconds": math.nan},
        {"simulated_seconds": math.inf},
        {"seconds": "60"},
    ],
)
def test_unreachable_budgets_are_refused_in_python(budget: dict) -> None:
    with pytest.raises(BudgetError):
        Budget(**budget)
    with pytest.raises(NasforgeError):
        api.search("nb201", "random", "nb201-table", **{"trials": None, **_api(budget)})


def _api(budget: dict) -> dict:
    names = {"trials": "trials", "seconds": "seconds", "simulated_seconds": "simulated_seconds"}
    return {names[k]: v for k, v in budget.items()}


def test_reachable_budgets_still_run() -> None:
    assert Budget(trials=1_000_000).trials == 1_000_000
    assert Budget(seconds=86_400.0, simulated_seconds=3.6e7).seconds == 86_400.0


def test_a_finite_space_ends_once_every_cell_is_seen() -> None:
    """The toy space has 81 cells: a run with a budget of 500 trials ends after the 81st,
    without asking the strategy for thousands of repeats first, and says why."""
    from rich.console import Console

    from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace
    from nasforge.run.experiment import Experiment
    from nasforge.run.spec import ExperimentSpec
    from nasforge_search import RandomSearch

    class Counting(RandomSearch):
        asks = 0

        def ask(self):  # noqa: ANN202
            Counting.asks += 1
            return super().ask()

    space = ToySpace()
    evaluator = ToyEvaluator(space)
    spec = ExperimentSpec(space="toy", strategy="random", evaluator="toy", budget=Budget(trials=500))
    console = Console(record=True, width=200)
    strategy = Counting(space, objective=spec.goal(evaluator), seed=0)
    outcome = Experiment(space, strategy, evaluator, spec, progress=False, console=console).run()
    assert len(outcome.history) == 81 == len({t.genotype for t in outcome.history})
    assert Counting.asks < 5_000, Counting.asks
    assert "every one of the 81 architectures" in console.export_text()

"""A strategy that has nothing more to propose ends its run normally, before the budget.

Eigen-NAS evaluates a fixed top-k; before strategies could say so, its runs ended only
when the duplicate detector gave up ("search space exhausted"), which reads like a fault.
"""

from __future__ import annotations

from rich.console import Console

from nasforge import Budget, api
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader
from nasforge.run.spec import ExperimentSpec


class FixedList(Strategy):
    """Proposes the first ``count`` genotypes of a seeded sample, then says it is finished."""

    name = "fixed-list"

    def __init__(self, space: ToySpace, *, objective, seed: int = 0, count: int = 4) -> None:
        super().__init__(space, objective=objective, seed=seed)
        self.todo = [space.sample(self.rng) for _ in range(count)]
        self.asked = 0

    def ask(self) -> Genotype:
        g = self.todo[min(self.asked, len(self.todo) - 1)]
        self.asked += 1
        return g

    def tell(self, g: Genotype, result: Result) -> None:
        pass

    @property
    def finished(self) -> bool:
        return self.asked >= len(self.todo)


def _run(tmp_path, *, workers: int = 1) -> tuple[Experiment, str]:
    space, evaluator = ToySpace(), ToyEvaluator(ToySpace())
    spec = ExperimentSpec(
        space="toy", strategy="fixed-list", evaluator="toy", budget=Budget(trials=50), seed=1, workers=workers
    )
    strategy = FixedList(space, objective=spec.goal(evaluator), seed=1, count=4)
    console = Console(record=True, width=200)
    experiment = Experiment(
        space, strategy, evaluator, spec, run_dir=tmp_path, progress=False, console=console
    )
    experiment.run()
    return experiment, console.export_text()


def test_a_finished_strategy_ends_the_run_before_its_budget(tmp_path) -> None:
    experiment, printed = _run(tmp_path)
    assert len(experiment.trials) == 4
    assert "'fixed-list' has nothing more to propose: finished after 4 trials" in printed
    assert "exhausted" not in printed
    reader = JournalReader.of_run(tmp_path)
    assert len(reader.trials) == 4 and reader.end is not None, "an ended run, not an interrupted one"


def test_a_round_of_several_workers_stops_at_the_last_proposal(tmp_path) -> None:
    experiment, _ = _run(tmp_path, workers=3)
    assert len(experiment.trials) == 4


def test_strategies_are_unfinished_by_default() -> None:
    outcome = api.search("toy", "random", "toy", trials=7, seed=0)
    assert len(outcome.history) == 7


class EndsOnRepeats(FixedList):
    """Two new genotypes, then repeats of the first: finished while the run answers them."""

    def __init__(self, space: ToySpace, *, objective, seed: int = 0) -> None:
        super().__init__(space, objective=objective, seed=seed, count=2)
        first, second = self.todo
        self.todo = [first, second, first, first]


def test_a_strategy_finished_on_repeats_the_run_answered_is_said(tmp_path) -> None:
    space, evaluator = ToySpace(), ToyEvaluator(ToySpace())
    spec = ExperimentSpec(
        space="toy", strategy="ends-on-repeats", evaluator="toy", budget=Budget(trials=50), seed=3
    )
    strategy = EndsOnRepeats(space, objective=spec.goal(evaluator), seed=3)
    assert strategy.todo[0] != strategy.todo[1]
    console = Console(record=True, width=200)
    experiment = Experiment(
        space, strategy, evaluator, spec, run_dir=tmp_path, progress=False, console=console
    )
    experiment.run()
    printed = console.export_text()
    assert len(experiment.trials) == 2
    assert "has nothing more to propose: finished after 2 trials" in printed
    assert "exhausted" not in printed

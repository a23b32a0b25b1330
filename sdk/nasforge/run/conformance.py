"""The strategy kits of :mod:`nasforge.kernel.testing`, plus the same checks run through the
core's run loop: journaled, killed half-way and resumed, and a multi-objective run's front.

A strategy that passes the kernel's kit keeps the contract; these add that the run built
around it (journal, replay, duplicate handling, fidelity accounting) gives the same
search. First-party strategies run them; a plugin author may.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.driver import first_difference
from nasforge.kernel.testing.strategy_kit import MultiObjectiveStrategyConformance, StrategyConformance
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec


class StrategyRunConformance(StrategyConformance):
    """:class:`~nasforge.kernel.testing.strategy_kit.StrategyConformance` and the run loop."""

    def _spec(
        self, strategy_cls: type[Strategy], evaluator: Evaluator, space: SearchSpace, opts, trials: int
    ):
        return ExperimentSpec(
            space=space.name,
            strategy=strategy_cls.name,
            evaluator=evaluator.name,
            budget=Budget(trials=trials),
            strategy_options=opts,
            objectives=self.objectives,
            constraints=self.constraints,
        )

    def _experiment(self, strategy_cls, options, space, evaluator, spec, run_dir, goal=None) -> Experiment:
        strategy = self._make(strategy_cls, space, evaluator, options, goal=goal or self._goal(evaluator))
        return Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False)

    def test_resumes_through_the_journal(
        self, strategy_cls, strategy_options, space, evaluator, tmp_path
    ) -> None:
        """A run killed half-way (its journal cut after half the trials) and resumed ends as
        the uninterrupted run did: same trials, best and front, none lost or repeated."""
        spec = self._spec(strategy_cls, evaluator, space, strategy_options, self.n_trials)

        def run(options: dict[str, Any], run_dir: Any) -> SearchOutcome:
            return self._experiment(strategy_cls, options, space, evaluator, spec, run_dir).run()

        full = run(strategy_options, tmp_path / "full")
        lines = journal_path(tmp_path / "full").read_text(encoding="utf-8").splitlines(keepends=True)
        kept = len(full.history) // 2  # the header and the first half of the trials: a killed run
        (tmp_path / "cut").mkdir()
        journal_path(tmp_path / "cut").write_text("".join(lines[: 1 + kept]), encoding="utf-8")
        resumed = run(json.loads(json.dumps(strategy_options)), tmp_path / "cut")  # options as journaled
        again = [(t.genotype, t.fidelity) for t in resumed.history]
        ran = [(t.genotype, t.fidelity) for t in full.history]
        assert again == ran, (
            f"the resumed run differs from the uninterrupted one: {first_difference(again, ran)}"
        )
        assert resumed.best == full.best, f"the resumed run's best {resumed.best} differs from {full.best}"
        front_resumed = [(t.index, t.genotype, t.result) for t in resumed.front]
        front_full = [(t.index, t.genotype, t.result) for t in full.front]
        assert front_resumed == front_full, (
            f"a resumed multi-objective run has the same front: {first_difference(front_resumed, front_full)}"
        )
        indices = [t.index for t in JournalReader.of_run(tmp_path / "cut").trials]
        assert indices == list(range(len(full.history))), (
            f"trials lost or repeated: journal indices {indices}"
        )

    def test_runs_in_experiment(self, strategy_cls, strategy_options, space, evaluator, tmp_path) -> None:
        spec = self._spec(strategy_cls, evaluator, space, strategy_options, 12)
        outcome = self._experiment(strategy_cls, strategy_options, space, evaluator, spec, tmp_path).run()
        assert 1 <= len(outcome.history) <= 12, f"a budget of 12 trials ran {len(outcome.history)}"
        space.validate(outcome.best)


class MultiObjectiveStrategyRunConformance(StrategyRunConformance, MultiObjectiveStrategyConformance):
    """The multi-objective kit and the run loop: a run's outcome holds the front, best first."""

    def test_a_run_returns_the_front(
        self, strategy_cls, strategy_options, space, evaluator, tmp_path
    ) -> None:
        for constraints in ((), (self.front_constraint,)):
            goal = SearchGoal.of(list(self.objectives), constraints)
            spec = attrs.evolve(
                self._spec(strategy_cls, evaluator, space, strategy_options, self.n_trials),
                constraints=constraints,
            )
            run_dir = tmp_path / f"c{len(constraints)}"
            outcome = self._experiment(
                strategy_cls, strategy_options, space, evaluator, spec, run_dir, goal
            ).run()
            front = goal.front(list(outcome.history))
            assert outcome.front == front, (
                "the run's front is its goal's front over every trial: "
                f"{first_difference(outcome.front, front)}"
            )
            members = tuple(t.genotype for t in front)
            assert outcome.members == members, (
                f"the outcome's members {outcome.members} are not the front's {members}"
            )
            assert outcome.best == front[0].genotype, (
                f"best is the front's first member: {outcome.best} vs {front[0].genotype}"
            )

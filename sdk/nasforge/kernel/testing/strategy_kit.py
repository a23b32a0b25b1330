"""The conformance kit of an ask/tell Strategy: valid, seeded, resumable by replay.

Usage, in the plugin's own tests (pytest collects the inherited ``test_*`` methods)::

    class TestMyStrategy(StrategyConformance):
        @pytest.fixture
        def strategy_cls(self):
            return MyStrategy

The checks are about the contract the core relies on (validity, determinism, resume by
replay), not about search quality; the space and evaluator default to the toy ones. A
multi-objective strategy (``multi_objective = True``) runs
:class:`MultiObjectiveStrategyConformance`, which adds that its runs give a correct Pareto
front, also under a constraint. :mod:`nasforge.run.conformance` adds the same checks run
through the core's journaled run loop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import max_fidelity, split
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.pareto import dominates
from nasforge.kernel.result import Objective, Result, Trial
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.context_checks import build_as_a_run, require_buildable
from nasforge.kernel.testing.driver import ask_and_tell, drive, first_difference, through_json
from nasforge.kernel.testing.space_kit import KNOWN_CAPABILITIES
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace


class StrategyConformance:
    """Provide a ``strategy_cls`` fixture; ``space``/``evaluator`` default to the toy ones.

    ``objectives`` and ``constraints`` (text, as on the command line) set the goal every
    check searches under; empty means the evaluator's objective, unconstrained. Every
    check builds the strategy as a run does, through its hook, from a
    :class:`~nasforge.kernel.run_context.RunContext` (:meth:`run_context`: the seed and the
    evaluator's full budget; override it to hand more).
    """

    n_trials = 30
    objectives: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()

    @pytest.fixture
    def strategy_cls(self) -> type[Strategy]:
        raise NotImplementedError("provide a `strategy_cls` fixture returning your Strategy class")

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def space(self) -> SearchSpace:
        return ToySpace()

    @pytest.fixture
    def evaluator(self, space: SearchSpace) -> Evaluator:
        return ToyEvaluator(space)

    def _goal(self, evaluator: Evaluator) -> SearchGoal:
        return SearchGoal.of(list(self.objectives) or [evaluator.objective], self.constraints)

    def run_context(self, evaluator: Evaluator, seed: int = 0) -> RunContext:
        """What the checks' runs hand the strategy: the seed and the evaluator's full budget."""
        return RunContext(seed=seed, max_fidelity=max_fidelity(evaluator))

    def _make(
        self,
        cls: type[Strategy],
        space: SearchSpace,
        evaluator: Evaluator,
        opts: dict,
        seed: int = 0,
        goal=None,
    ):
        goal = self._goal(evaluator) if goal is None else goal
        return build_as_a_run(
            "strategy", cls, self.run_context(evaluator, seed), space, objective=goal, **opts
        )

    def test_identity(self, strategy_cls: type[Strategy]) -> None:
        name = getattr(strategy_cls, "name", None)
        assert isinstance(name, str) and name, f"a strategy's name must be a non-empty string, got {name!r}"
        unknown = set(strategy_cls.requires) - KNOWN_CAPABILITIES
        assert not unknown, (
            f"requires names unknown capabilities {sorted(unknown)} (known: {sorted(KNOWN_CAPABILITIES)})"
        )
        assert isinstance(strategy_cls.multi_objective, bool), (
            f"multi_objective must be a bool, got {strategy_cls.multi_objective!r}"
        )

    def test_builds_from_a_run_context(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """A run builds every strategy through its hook: each context field it declares is
        one a run context holds, and its constructor takes what is passed."""
        require_buildable("strategy", strategy_cls)
        strategy = self._make(strategy_cls, space, evaluator, strategy_options, seed=3)
        assert isinstance(strategy, strategy_cls), (
            f"the hook built a {type(strategy).__name__}, not a {strategy_cls.__name__}"
        )

    def test_refuses_several_objectives_unless_multi_objective(
        self, strategy_cls, strategy_options, space, evaluator
    ) -> None:
        """A single-objective strategy given two objectives must say so, not optimise the first."""
        if strategy_cls.multi_objective:
            return
        other = Objective(evaluator.objective.name + "_other", higher_is_better=False)
        goal = SearchGoal.of([evaluator.objective, other])
        with pytest.raises(NasforgeError):
            self._make(strategy_cls, space, evaluator, strategy_options, goal=goal)

    def test_asks_valid_genotypes(self, strategy_cls, strategy_options, space, evaluator) -> None:
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        for asked in ask_and_tell(strategy, evaluator, self.n_trials):
            g, fidelity = split(asked)
            space.validate(g)
            assert fidelity is None or fidelity >= 1, (
                f"asked {g} at fidelity {fidelity!r} (want None or >= 1)"
            )

    def test_deterministic_given_seed(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """Resume-by-replay relies on this: same seed + same results -> same asks."""
        a = ask_and_tell(
            self._make(strategy_cls, space, evaluator, strategy_options), evaluator, self.n_trials
        )
        b = ask_and_tell(
            self._make(strategy_cls, space, evaluator, strategy_options), evaluator, self.n_trials
        )
        assert a == b, f"same seed, different asks: {first_difference(a, b)}"

    def test_says_whether_it_is_finished(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """``finished`` is a bool; a strategy that says it is finished is never asked again
        by a run, so it must not say so before its first proposal."""
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        assert isinstance(strategy.finished, bool), f"finished must be a bool, got {strategy.finished!r}"
        assert not strategy.finished, "finished before proposing anything"
        ask_and_tell(strategy, evaluator, 1)
        assert isinstance(strategy.finished, bool), f"finished must be a bool, got {strategy.finished!r}"

    def test_survives_failed_results(self, strategy_cls, strategy_options, space, evaluator) -> None:
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        for _ in range(self.n_trials // 2):
            g = strategy.ask()
            strategy.tell(g, Result(objectives={}, failed=True, error="boom"))
        space.validate(split(strategy.ask())[0])

    def test_resumes_by_replay(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """A killed run, resumed, ends as if never killed: what ``nasforge resume`` relies on.

        Strategies keep no saved state; a run resumes by rebuilding the strategy from the
        journal (the options read back from JSON) and answering its asks from the recorded
        results until the journal runs out. Beyond the seeded determinism checked above,
        that needs the strategy to go on the same way after being told results that went
        through JSON, and to take its options back from JSON.
        """
        full = drive(self._make(strategy_cls, space, evaluator, strategy_options), evaluator, self.n_trials)
        kept = through_json(full[: len(full) // 2])  # the first half of the trials: a killed run
        options = json.loads(json.dumps(strategy_options))  # options as journaled
        resumed = drive(
            self._make(strategy_cls, space, evaluator, options), evaluator, self.n_trials, replay=kept
        )
        ran = [(t.genotype, t.fidelity) for t in full]
        again = [(t.genotype, t.fidelity) for t in resumed]
        assert again == ran, (
            f"the resumed run differs from the uninterrupted one: {first_difference(again, ran)}"
        )
        goal = self._goal(evaluator)
        front_resumed = [(t.index, t.genotype) for t in goal.front(resumed)]
        front_full = [(t.index, t.genotype) for t in goal.front(full)]
        assert front_resumed == front_full, (
            "a resumed run has the same front (of one objective: the same best): "
            f"{first_difference(front_resumed, front_full)}"
        )

    def test_runs_to_its_budget(self, strategy_cls, strategy_options, space, evaluator) -> None:
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        history = drive(strategy, evaluator, 12)
        assert 1 <= len(history) <= 12, f"a budget of 12 trials ran {len(history)}"
        best = self._goal(evaluator).best(history)
        assert best is not None, f"no best among {len(history)} trials"
        space.validate(best.genotype)


class MultiObjectiveStrategyConformance(StrategyConformance):
    """For strategies with ``multi_objective = True``: every check of
    :class:`StrategyConformance` under two objectives (the toy evaluator's ``score:max`` and
    ``size:min``; set ``objectives`` for other evaluators), plus the front a run returns."""

    objectives: tuple[str, ...] = ("score:max", "size:min")
    #: A constraint that leaves some, not all, of the space feasible (for the toy evaluator).
    front_constraint: str = "size<=4"

    def _run(self, strategy_cls, strategy_options, space, evaluator, constraints=()) -> list[Trial]:
        goal = SearchGoal.of(list(self.objectives), constraints)
        strategy = self._make(strategy_cls, space, evaluator, strategy_options, goal=goal)
        return drive(strategy, evaluator, self.n_trials)

    def _check_front(self, history: list[Trial], goal: SearchGoal) -> None:
        front = goal.front(history)
        assert front, f"a run of several objectives returns a non-empty Pareto front ({len(history)} trials)"
        best = goal.best(history)
        assert best == front[0], f"best is the front's first member: {best} vs {front[0]}"
        assert len({t.genotype for t in front}) == len(front), "each genotype once on the front"
        feasible = [t for t in history if goal.feasible(t.result)]
        for member in front:
            assert goal.feasible(member.result), f"an infeasible result is on the front: trial {member.index}"
            for other in feasible:
                assert not dominates(goal.vector(other.result), goal.vector(member.result), goal.maximize), (
                    f"front member {member.index} {goal.vector(member.result)} is dominated by trial "
                    f"{other.index} {goal.vector(other.result)}"
                )
        on_front = {t.genotype for t in front}
        for t in feasible:  # brute force: whatever nothing dominates is on the front
            if not any(
                dominates(goal.vector(o.result), goal.vector(t.result), goal.maximize) for o in feasible
            ):
                assert t.genotype in on_front, (
                    f"trial {t.index} {goal.vector(t.result)} is undominated, not on the front"
                )

    def test_identity(self, strategy_cls: type[Strategy]) -> None:
        super().test_identity(strategy_cls)
        assert strategy_cls.multi_objective is True, (
            f"multi_objective is {strategy_cls.multi_objective!r}, not True"
        )

    def test_returns_the_pareto_front(self, strategy_cls, strategy_options, space, evaluator) -> None:
        history = self._run(strategy_cls, strategy_options, space, evaluator)
        self._check_front(history, SearchGoal.of(list(self.objectives)))

    def test_front_obeys_constraints(self, strategy_cls, strategy_options, space, evaluator) -> None:
        constraints = (self.front_constraint,)
        history = self._run(strategy_cls, strategy_options, space, evaluator, constraints)
        goal = SearchGoal.of(list(self.objectives), constraints)
        self._check_front(history, goal)
        for c in goal.constraints:
            broken = [t.index for t in goal.front(history) if not c.satisfied(t.result)]
            assert not broken, f"front members {broken} break the constraint {c}"

    def test_takes_a_single_objective(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """One objective is a front of one point's worth: a multi-objective strategy still runs."""
        strategy = self._make(strategy_cls, space, evaluator, strategy_options, goal=evaluator.objective)
        for asked in ask_and_tell(strategy, evaluator, self.n_trials):
            space.validate(split(asked)[0])

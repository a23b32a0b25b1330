"""Test suites every SearchSpace, Strategy, Evaluator and Metric plugin must pass.

Usage, in the plugin's own tests (pytest collects the inherited ``test_*`` methods)::

    from nasforge.kernel.testing.conformance import SearchSpaceConformance

    class TestMySpace(SearchSpaceConformance):
        @pytest.fixture
        def space(self):
            return MySpace()

The checks are about the contract the core relies on (validity, determinism, lossless
round trips, resume by replay), not about search quality. A multi-objective strategy
(``multi_objective = True``) runs :class:`MultiObjectiveStrategyConformance`, which adds
that its runs return a correct Pareto front, also under a constraint and on resume.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from typing import Any

import attrs
import pytest
import torch

from nasforge.kernel.datasets import TensorData, load_gaussian
from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError, NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Proposal, split
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Metric, MetricContext, MetricInfo
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.pareto import dominates
from nasforge.kernel.result import Objective, Result, SearchOutcome, Trial
from nasforge.kernel.search_space import (
    BUILD,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    SUPERNET,
    SearchSpace,
)
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.kernel.strategy import OneShotStrategy, Strategy
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.journal import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.export import export_genotype, load_genotype

KNOWN_CAPABILITIES = {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET}
N_SAMPLES = 8


def _samples(space: SearchSpace, n: int = N_SAMPLES, seed: int = 0) -> list[Genotype]:
    rng = random.Random(seed)
    return [space.sample(rng) for _ in range(n)]


class SearchSpaceConformance:
    """Provide a ``space`` fixture; override ``build_kwargs``/``input_shape`` if needed."""

    #: Largest space for which the kit walks ``enumerate()`` completely.
    max_enumerate = 20_000

    @pytest.fixture
    def space(self) -> SearchSpace:
        raise NotImplementedError("provide a `space` fixture returning your SearchSpace")

    @pytest.fixture
    def build_kwargs(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (2, 3, 32, 32)

    @staticmethod
    def _refuses(space: SearchSpace, call: Any) -> None:
        """An undeclared capability must fail loudly with CapabilityError, not half-work."""
        with pytest.raises(CapabilityError):
            call()

    def test_identity(self, space: SearchSpace) -> None:
        assert isinstance(space.name, str) and space.name
        assert isinstance(space.version, str) and space.version
        assert space.capabilities <= KNOWN_CAPABILITIES, space.capabilities - KNOWN_CAPABILITIES
        assert SAMPLE in space.capabilities
        assert all(isinstance(op, str) for op in space.op_names)

    def test_sample_is_valid_and_seeded(self, space: SearchSpace) -> None:
        a, b = _samples(space), _samples(space)
        assert a == b, "sample(rng) must depend only on the rng"
        for g in a:
            assert (g.space, g.version) == (space.name, space.version)
            space.validate(g)
            hash(g)

    def test_text_round_trip(self, space: SearchSpace) -> None:
        for g in _samples(space):
            text = space.format(g)
            assert isinstance(text, str)
            assert space.parse(text) == g

    def test_parse_rejects_garbage(self, space: SearchSpace) -> None:
        for bad in ("", "definitely not a genotype", "|||+|||"):
            with pytest.raises(InvalidGenotypeError):
                space.parse(bad)

    def test_validate_rejects_foreign(self, space: SearchSpace) -> None:
        g = _samples(space, 1)[0]
        with pytest.raises(InvalidGenotypeError):
            space.validate(Genotype(space=space.name + "-other", version=space.version, choices=g.choices))
        with pytest.raises(InvalidGenotypeError):
            space.validate(Genotype(space=space.name, version=space.version + "x", choices=g.choices))

    def test_tensor_and_safetensors_round_trip(self, space: SearchSpace, tmp_path: Any) -> None:
        for i, g in enumerate(_samples(space)):
            tensors, meta = g.to_tensors()
            assert Genotype.from_tensors(tensors, meta) == g
            path = export_genotype(g, tmp_path / f"g{i}.safetensors", space)
            assert load_genotype(path, space) == g

    def test_mutate(self, space: SearchSpace) -> None:
        if MUTATE not in space.capabilities:
            return self._refuses(space, lambda: space.mutate(_samples(space, 1)[0], random.Random(0)))
        rng = random.Random(1)
        for g in _samples(space):
            child = space.mutate(g, rng)
            space.validate(child)
            assert child != g, "mutate must change the genotype"

    def test_neighbours(self, space: SearchSpace) -> None:
        if NEIGHBOURS not in space.capabilities:
            return self._refuses(space, lambda: space.neighbours(_samples(space, 1)[0]))
        for g in _samples(space, 3):
            ns = space.neighbours(g)
            assert ns, "a genotype needs at least one neighbour"
            assert g not in ns
            assert len(set(ns)) == len(ns), "neighbours must be unique"
            assert ns == space.neighbours(g), "neighbours must be deterministic"
            for n in ns:
                space.validate(n)

    def test_encode_decode(self, space: SearchSpace) -> None:
        if ENCODE not in space.capabilities:
            return self._refuses(space, lambda: space.encode(_samples(space, 1)[0]))
        lengths = set()
        for g in _samples(space):
            x = space.encode(g)
            assert x.dtype.is_floating_point and x.dim() == 1
            lengths.add(x.numel())
            assert space.decode(x) == g
        assert len(lengths) == 1, "encodings must have a fixed length"

    def test_enumerate(self, space: SearchSpace) -> None:
        if ENUMERATE not in space.capabilities:
            return self._refuses(space, lambda: next(iter(space.enumerate())))
        size = space.size
        assert size is not None and size > 0
        walked = list(itertools.islice(space.enumerate(), self.max_enumerate))
        seen = set(walked)
        assert len(seen) == len(walked), "enumerate() must not repeat genotypes"
        if size > self.max_enumerate:  # too large to walk: check the prefix only
            assert len(walked) == self.max_enumerate
            return
        assert len(seen) == size
        for g in _samples(space):
            assert g in seen

    def test_build_forward(
        self, space: SearchSpace, build_kwargs: dict[str, Any], input_shape: tuple[int, ...]
    ) -> None:
        if BUILD not in space.capabilities:
            return self._refuses(space, lambda: space.build(_samples(space, 1)[0]))
        g = _samples(space, 1)[0]
        model = seeded_build(lambda: space.build(g, **build_kwargs), 0)
        with torch.no_grad():
            out = model.eval()(torch.randn(*input_shape, generator=seeded_generator(0)))
        if isinstance(out, tuple | list):
            out = out[0]
        assert out.shape[0] == input_shape[0]
        assert torch.isfinite(out).all()


def _drive(strategy: Strategy, evaluator: Evaluator, n: int) -> list[Genotype | Proposal]:
    """Ask and tell ``n`` times; a :class:`Proposal` is evaluated at its fidelity."""
    asked = []
    for _ in range(n):
        g = strategy.ask()
        asked.append(g)
        genotype, fidelity = split(g)
        result = (
            evaluator.evaluate(genotype) if fidelity is None else evaluator.evaluate_at(genotype, fidelity)
        )
        strategy.tell(g, result)
    return asked


class StrategyConformance:
    """Provide a ``strategy_cls`` fixture; ``space``/``evaluator`` default to the toy ones.

    ``objectives`` and ``constraints`` (text, as on the command line) set the goal every
    check searches under; empty means the evaluator's objective, unconstrained.
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

    def _make(self, cls: type[Strategy], space: SearchSpace, evaluator: Evaluator, opts: dict, seed: int = 0):
        return cls(space, objective=self._goal(evaluator), seed=seed, **opts)

    def test_identity(self, strategy_cls: type[Strategy]) -> None:
        assert isinstance(strategy_cls.name, str) and strategy_cls.name
        assert strategy_cls.requires <= KNOWN_CAPABILITIES
        assert isinstance(strategy_cls.multi_objective, bool)

    def test_refuses_several_objectives_unless_multi_objective(
        self, strategy_cls, strategy_options, space, evaluator
    ) -> None:
        """A single-objective strategy given two objectives must say so, not optimise the first."""
        if strategy_cls.multi_objective:
            return
        other = Objective(evaluator.objective.name + "_other", higher_is_better=False)
        goal = SearchGoal.of([evaluator.objective, other])
        with pytest.raises(NasforgeError):
            strategy_cls(space, objective=goal, seed=0, **strategy_options)

    def test_asks_valid_genotypes(self, strategy_cls, strategy_options, space, evaluator) -> None:
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        for asked in _drive(strategy, evaluator, self.n_trials):
            g, fidelity = split(asked)
            space.validate(g)
            assert fidelity is None or fidelity >= 1

    def test_deterministic_given_seed(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """Resume-by-replay relies on this: same seed + same results -> same asks."""
        a = _drive(self._make(strategy_cls, space, evaluator, strategy_options), evaluator, self.n_trials)
        b = _drive(self._make(strategy_cls, space, evaluator, strategy_options), evaluator, self.n_trials)
        assert a == b

    def test_says_whether_it_is_finished(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """``finished`` is a bool; a strategy that says it is finished is never asked again
        by a run, so it must not say so before its first proposal."""
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        assert isinstance(strategy.finished, bool)
        assert not strategy.finished, "finished before proposing anything"
        _drive(strategy, evaluator, 1)
        assert isinstance(strategy.finished, bool)

    def test_survives_failed_results(self, strategy_cls, strategy_options, space, evaluator) -> None:
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        for _ in range(self.n_trials // 2):
            g = strategy.ask()
            strategy.tell(g, Result(objectives={}, failed=True, error="boom"))
        space.validate(split(strategy.ask())[0])

    def test_resumes_by_replay(self, strategy_cls, strategy_options, space, evaluator, tmp_path) -> None:
        """A killed run, resumed, ends as if never killed: what ``nasforge resume`` relies on.

        Strategies keep no saved state; an Experiment resumes by rebuilding the strategy
        from the journal (the options read back from JSON) and answering its asks from
        the recorded results until the journal runs out. Beyond the seeded determinism
        checked above, that needs the strategy to go on the same way after being told
        results that went through the journal, and to take its options back from JSON.
        """
        spec = self._spec(strategy_cls, evaluator, space, strategy_options, self.n_trials)

        def run(options: dict[str, Any], run_dir: Any) -> SearchOutcome:
            strategy = self._make(strategy_cls, space, evaluator, options)
            return Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False).run()

        full = run(strategy_options, tmp_path / "full")
        lines = journal_path(tmp_path / "full").read_text(encoding="utf-8").splitlines(keepends=True)
        kept = len(full.history) // 2  # the header and the first half of the trials: a killed run
        (tmp_path / "cut").mkdir()
        journal_path(tmp_path / "cut").write_text("".join(lines[: 1 + kept]), encoding="utf-8")
        resumed = run(json.loads(json.dumps(strategy_options)), tmp_path / "cut")  # options as journaled
        assert [(t.genotype, t.fidelity) for t in resumed.history] == [
            (t.genotype, t.fidelity) for t in full.history
        ]
        assert resumed.best == full.best
        assert [(t.index, t.genotype, t.result) for t in resumed.front] == [
            (t.index, t.genotype, t.result) for t in full.front
        ], "a resumed multi-objective run has the same front"
        trials = JournalReader.of_run(tmp_path / "cut").trials
        assert [t.index for t in trials] == list(range(len(full.history))), "no trial lost or repeated"

    def test_runs_in_experiment(self, strategy_cls, strategy_options, space, evaluator, tmp_path) -> None:
        spec = self._spec(strategy_cls, evaluator, space, strategy_options, 12)
        strategy = self._make(strategy_cls, space, evaluator, strategy_options)
        exp = Experiment(space, strategy, evaluator, spec, run_dir=tmp_path, progress=False)
        outcome = exp.run()
        assert 1 <= len(outcome.history) <= 12
        space.validate(outcome.best)


class MultiObjectiveStrategyConformance(StrategyConformance):
    """For strategies with ``multi_objective = True``: every check of
    :class:`StrategyConformance` under two objectives (the toy evaluator's ``score:max`` and
    ``size:min``; set ``objectives`` for other evaluators), plus the front a run returns."""

    objectives: tuple[str, ...] = ("score:max", "size:min")
    #: A constraint that leaves some, not all, of the space feasible (for the toy evaluator).
    front_constraint: str = "size<=4"

    def _run(
        self, strategy_cls, strategy_options, space, evaluator, run_dir, constraints=()
    ) -> SearchOutcome:
        goal = SearchGoal.of(list(self.objectives), constraints)
        spec = attrs.evolve(
            self._spec(strategy_cls, evaluator, space, strategy_options, self.n_trials),
            constraints=constraints,
        )
        strategy = strategy_cls(space, objective=goal, seed=0, **strategy_options)
        return Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False).run()

    def _check_front(self, outcome: SearchOutcome, goal: SearchGoal) -> None:
        front = outcome.front
        assert front, "a run of several objectives returns a non-empty Pareto front"
        assert outcome.members == tuple(t.genotype for t in front)
        assert outcome.best == front[0].genotype, "best is the front's first member"
        assert len({t.genotype for t in front}) == len(front), "each genotype once"
        feasible = [t for t in outcome.history if goal.feasible(t.result)]
        for member in front:
            assert goal.feasible(member.result), "an infeasible result is never on the front"
            for other in feasible:
                assert not dominates(goal.vector(other.result), goal.vector(member.result), goal.maximize)
        on_front = {t.genotype for t in front}
        for t in feasible:  # brute force: whatever nothing dominates is on the front
            if not any(
                dominates(goal.vector(o.result), goal.vector(t.result), goal.maximize) for o in feasible
            ):
                assert t.genotype in on_front

    def test_identity(self, strategy_cls: type[Strategy]) -> None:
        super().test_identity(strategy_cls)
        assert strategy_cls.multi_objective is True

    def test_returns_the_pareto_front(
        self, strategy_cls, strategy_options, space, evaluator, tmp_path
    ) -> None:
        outcome = self._run(strategy_cls, strategy_options, space, evaluator, tmp_path)
        self._check_front(outcome, SearchGoal.of(list(self.objectives)))

    def test_front_obeys_constraints(
        self, strategy_cls, strategy_options, space, evaluator, tmp_path
    ) -> None:
        constraints = (self.front_constraint,)
        outcome = self._run(strategy_cls, strategy_options, space, evaluator, tmp_path, constraints)
        goal = SearchGoal.of(list(self.objectives), constraints)
        self._check_front(outcome, goal)
        for c in goal.constraints:
            assert all(c.satisfied(t.result) for t in outcome.front)

    def test_takes_a_single_objective(self, strategy_cls, strategy_options, space, evaluator) -> None:
        """One objective is a front of one point's worth: a multi-objective strategy still runs."""
        strategy = strategy_cls(space, objective=evaluator.objective, seed=0, **strategy_options)
        for g in _drive(strategy, evaluator, self.n_trials):
            space.validate(g)


class EvaluatorConformance:
    """Provide ``evaluator`` (bound to its space) fixtures."""

    @pytest.fixture
    def evaluator(self) -> Evaluator:
        raise NotImplementedError("provide an `evaluator` fixture")

    def test_identity(self, evaluator: Evaluator) -> None:
        assert isinstance(evaluator.name, str) and evaluator.name
        assert isinstance(evaluator.objective, Objective)
        json.dumps(evaluator.describe())

    def test_evaluate(self, evaluator: Evaluator) -> None:
        for g in _samples(evaluator.space, 4):
            r = evaluator.evaluate(g)
            assert isinstance(r, Result)
            assert r.cost >= 0
            if not r.failed:
                assert evaluator.objective.name in r.objectives
                assert not math.isnan(r.objectives[evaluator.objective.name])
            json.dumps(r.to_json())

    def test_rejects_foreign_genotype(self, evaluator: Evaluator) -> None:
        g = _samples(evaluator.space, 1)[0]
        foreign = Genotype(space=g.space + "-other", version=g.version, choices=g.choices)
        with pytest.raises(NasforgeError):
            evaluator.evaluate(foreign)


class MetricConformance:
    """Provide ``metric``; ``model`` and ``batch`` default to a small conv net and batch."""

    @pytest.fixture
    def metric(self) -> Metric:
        raise NotImplementedError("provide a `metric` fixture")

    @pytest.fixture
    def model_factory(self):  # noqa: ANN201 - returns a callable
        def make() -> torch.nn.Module:
            return seeded_build(
                lambda: torch.nn.Sequential(
                    torch.nn.Conv2d(3, 8, 3, padding=1),
                    torch.nn.BatchNorm2d(8),
                    torch.nn.ReLU(),
                    torch.nn.AdaptiveAvgPool2d(1),
                    torch.nn.Flatten(),
                    torch.nn.Linear(8, 10),
                ),
                0,
            )

        return make

    @pytest.fixture
    def batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        gen = torch.Generator().manual_seed(0)
        return torch.randn(8, 3, 16, 16, generator=gen), torch.randint(0, 10, (8,), generator=gen)

    def test_info(self, metric: Metric) -> None:
        assert isinstance(metric.info, MetricInfo)
        assert metric.name == metric.info.name

    def test_score_is_float_and_deterministic(self, metric: Metric, model_factory, batch) -> None:
        ctx = MetricContext(num_classes=10, seed=0)
        if metric.info.population:  # only meaningful across many networks: must say so
            with pytest.raises(NasforgeError):
                metric.score(model_factory(), batch, ctx=ctx)
            return
        a = metric.score(model_factory(), batch, ctx=ctx)
        b = metric.score(model_factory(), batch, ctx=ctx)
        assert isinstance(a, float)
        assert a == pytest.approx(b, rel=1e-5, nan_ok=True)

    def test_score_ignores_the_global_generator(self, metric: Metric, model_factory, batch) -> None:
        """Random numbers come from ``ctx.seed`` (scorers never seed torch's global
        generator, and other threads share it), so its state must not change a score."""
        if metric.info.population:
            return
        ctx = MetricContext(num_classes=10, seed=0)
        scores = []
        for state in (1, 2):
            torch.manual_seed(state)
            scores.append(metric.score(model_factory(), batch, ctx=ctx))
        assert scores[0] == pytest.approx(scores[1], rel=1e-5, nan_ok=True)


class OneShotStrategyConformance:
    """Provide ``strategy_cls``, tiny ``strategy_options`` and a ``space`` with a supernet."""

    @pytest.fixture
    def strategy_cls(self) -> type[OneShotStrategy]:
        raise NotImplementedError("provide a `strategy_cls` fixture returning your OneShotStrategy class")

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def space(self) -> SearchSpace:
        raise NotImplementedError("provide a `space` fixture (with the 'supernet' capability)")

    @pytest.fixture
    def data(self) -> TensorData:
        return load_gaussian(seed=0, n=48, shape=(3, 8, 8), num_classes=4)

    def _fit(self, cls, options, space, data, seed: int = 0):
        seen: list[Trial] = []
        outcome = cls(seed=seed, progress=False, **options).fit(space, data, on_trial=seen.append)
        return outcome, seen

    def test_identity(self, strategy_cls) -> None:
        assert isinstance(strategy_cls.name, str) and strategy_cls.name
        assert strategy_cls.requires <= KNOWN_CAPABILITIES

    def test_fit_returns_valid_outcome(self, strategy_cls, strategy_options, space, data) -> None:
        outcome, seen = self._fit(strategy_cls, strategy_options, space, data)
        assert isinstance(outcome, SearchOutcome)
        space.validate(outcome.best)
        assert seen, "on_trial must be called as the search goes"
        for trial in seen:
            space.validate(trial.genotype)
        json.dumps([t.to_json() for t in seen])  # journalable

    def test_deterministic_given_seed(self, strategy_cls, strategy_options, space, data) -> None:
        a, _ = self._fit(strategy_cls, strategy_options, space, data)
        b, _ = self._fit(strategy_cls, strategy_options, space, data)
        assert a.best == b.best
        assert [t.genotype for t in a.history] == [t.genotype for t in b.history]

    def test_refuses_space_without_supernet(self, strategy_cls, strategy_options, data) -> None:
        if SUPERNET not in strategy_cls.requires:
            return  # the strategy does not need one: nothing to refuse
        with pytest.raises(CapabilityError):
            self._fit(strategy_cls, strategy_options, ToySpace(), data)

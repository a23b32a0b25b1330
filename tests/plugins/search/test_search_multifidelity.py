"""Successive halving and Hyperband on the toy space with a toy fidelity (epochs)."""

from __future__ import annotations

import json

import pytest

from nasforge.kernel.errors import CapabilityError, OptionError
from nasforge.kernel.testing import ToyEvaluator, ToyFidelityEvaluator, ToySpace
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec
from nasforge_search import Hyperband, MedianPruner, SuccessiveHalving
from nasforge_search.successive_halving import hyperband_brackets, rung_fidelities


def _spec(
    name: str, evaluator: str = "toy-epochs", trials: int = 200, dedup: bool = True, **options
) -> ExperimentSpec:
    return ExperimentSpec(
        space="toy",
        strategy=name,
        evaluator=evaluator,
        budget=Budget(trials=trials),
        strategy_options=options,
        dedup=dedup,
    )


def _run(cls, run_dir=None, workers: int = 1, dedup: bool = True, **options) -> Experiment:
    space = ToySpace()
    evaluator = ToyFidelityEvaluator(space)
    strategy = cls(space, objective=evaluator.objective, seed=3, max_fidelity=9, **options)
    spec = _spec(cls.name, dedup=dedup, **options)
    exp = Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False)
    if workers > 1:
        from nasforge.run.executors import InProcessExecutor

        exp.executor = InProcessExecutor(workers=workers)
    exp.run()
    return exp


def test_rungs_and_brackets() -> None:
    assert rung_fidelities(1, 9, 3) == [1, 3, 9]
    assert rung_fidelities(1, 27, 3) == [1, 3, 9, 27]
    assert rung_fidelities(1, 5, 3) == [2, 5]
    assert rung_fidelities(3, 3, 3) == [3]
    assert hyperband_brackets([1, 3, 9], 3) == [([9, 3, 1], [1, 3, 9]), ([5, 1], [3, 9]), ([3], [9])]


def test_successive_halving_promotes_the_best_third() -> None:
    exp = _run(SuccessiveHalving, brackets=1)
    trials = exp.trials
    assert [t.fidelity for t in trials] == [1] * 9 + [3] * 3 + [9]
    first = sorted(trials[:9], key=lambda t: -t.result.objectives["score"])
    assert {t.genotype for t in trials[9:12]} == {t.genotype for t in first[:3]}
    second = max(trials[9:12], key=lambda t: t.result.objectives["score"])
    assert trials[12].genotype == second.genotype
    assert exp.fidelity_spent() == 9 + 9 + 9
    assert len({t.genotype for t in trials[:9]}) == 9, "a bracket draws distinct architectures"


def test_hyperband_runs_its_brackets_and_counts_epochs() -> None:
    exp = _run(Hyperband, brackets=3, dedup=False)
    assert [t.fidelity for t in exp.trials] == [1] * 9 + [3] * 3 + [9] + [3] * 5 + [9] + [9] * 3
    assert exp.fidelity_spent() == 27 + 24 + 27
    assert exp.strategy.finished
    # with dedup (the default) an architecture already evaluated at a fidelity is not
    # trained again when a later bracket draws it: fewer trials, fewer epochs
    deduped = _run(Hyperband, brackets=3)
    assert deduped.fidelity_spent() < 27 + 24 + 27 and deduped.strategy.finished


def test_the_best_is_chosen_among_full_budget_trials() -> None:
    """A short evaluation that happens to score higher never becomes the best."""
    exp = _run(Hyperband, brackets=3)
    best = exp.best_so_far()
    assert best is not None and best.fidelity == 9
    partial = max(exp.trials, key=lambda t: t.result.objectives["score"])
    assert partial.fidelity != 9, "the toy distorts short evaluations upwards for this seed"


def test_journal_records_fidelity_and_curve(tmp_path) -> None:
    _run(SuccessiveHalving, run_dir=tmp_path, brackets=1)
    lines = [json.loads(line) for line in journal_path(tmp_path).read_text().splitlines()]
    trials = [r for r in lines if r["type"] == "trial"]
    assert [r["fidelity"] for r in trials] == [1] * 9 + [3] * 3 + [9]
    assert all(len(r["result"]["metadata"]["per_epoch"]["score"]) == r["fidelity"] for r in trials)
    assert lines[-1]["type"] == "end" and lines[-1]["fidelity_spent"] == 27
    assert [t.fidelity for t in JournalReader.of_run(tmp_path).trials] == [r["fidelity"] for r in trials]


@pytest.mark.slow
@pytest.mark.parametrize("cls", [SuccessiveHalving, Hyperband])
def test_resume_mid_bracket_gives_the_same_run(cls, tmp_path) -> None:
    full = _run(cls, run_dir=tmp_path / "full", brackets=3)
    lines = journal_path(tmp_path / "full").read_text().splitlines(keepends=True)
    (tmp_path / "cut").mkdir()
    journal_path(tmp_path / "cut").write_text("".join(lines[:11]))  # header + 10 trials: mid-rung
    resumed = _run(cls, run_dir=tmp_path / "cut", brackets=3)
    assert [(t.genotype, t.fidelity, t.result) for t in resumed.trials] == [
        (t.genotype, t.fidelity, t.result) for t in full.trials
    ]
    assert resumed.outcome.best == full.outcome.best
    assert resumed.fidelity_spent() == full.fidelity_spent()


def test_parallel_asks_start_the_next_bracket() -> None:
    """With several workers a rung that waits for results does not idle them."""
    exp = _run(Hyperband, workers=4, brackets=2)
    assert exp.strategy.finished
    fidelities = [t.fidelity for t in exp.trials]
    assert fidelities.count(9) >= 2 and set(fidelities) <= {1, 3, 9}


def test_dedup_is_by_genotype_and_fidelity() -> None:
    """The same architecture at 1 and at 3 epochs is two evaluations; at the same one, one."""
    exp = _run(SuccessiveHalving, brackets=1)
    keys = [(t.genotype, t.fidelity) for t in exp.trials]
    assert len(set(keys)) == len(keys)
    promoted = {t.genotype for t in exp.trials if t.fidelity == 3}
    assert promoted <= {t.genotype for t in exp.trials if t.fidelity == 1}


def test_an_evaluator_without_fidelity_is_refused() -> None:
    space = ToySpace()
    evaluator = ToyEvaluator(space)
    strategy = Hyperband(space, objective=evaluator.objective, max_fidelity=9)
    exp = Experiment(space, strategy, evaluator, _spec("hyperband", evaluator="toy"), progress=False)
    with pytest.raises(CapabilityError, match="declares no fidelity"):
        exp.run()


def test_options_are_checked() -> None:
    space = ToySpace()
    objective = ToyEvaluator(space).objective
    with pytest.raises(OptionError, match="max_fidelity"):
        Hyperband(space, objective=objective)
    with pytest.raises(OptionError):
        SuccessiveHalving(space, objective=objective, max_fidelity=9, eta=1)
    with pytest.raises(OptionError):
        SuccessiveHalving(space, objective=objective, max_fidelity=3, min_fidelity=4)


def test_the_run_offers_the_evaluators_full_budget(tmp_path) -> None:
    """Built from a spec, the strategy learns max_fidelity from the evaluator's epochs."""
    spec = ExperimentSpec(
        space="toy",
        strategy="sh",
        evaluator="toy-epochs",
        budget=Budget(trials=100),
        strategy_options={"brackets": 1},
        evaluator_options={"epochs": 3},
    )
    exp = Experiment.from_spec(spec, run_dir=tmp_path, progress=False)
    exp.run()
    assert [t.fidelity for t in exp.trials] == [1, 1, 1, 3]
    assert exp.strategy.max_fidelity == 3


def test_median_pruner_stops_trials_below_the_median_and_journals_them(tmp_path) -> None:
    space = ToySpace()
    evaluator = ToyFidelityEvaluator(space)
    strategy = MedianPruner(space, objective=evaluator.objective, seed=1, strategy="random", warmup=3)
    spec = _spec("median", trials=20, strategy="random", warmup=3)
    exp = Experiment(space, strategy, evaluator, spec, run_dir=tmp_path, progress=False)
    exp.run()
    stopped = [t for t in exp.trials if t.result.metadata.get("stopped_at")]
    assert stopped, "some trials fall below the median"
    assert all(t.index >= 3 for t in stopped), "no pruning during warm-up"
    for t in stopped:  # recorded with what it reached, never the best
        curve = t.result.metadata["per_epoch"]["score"]
        assert len(curve) == t.result.metadata["stopped_at"] < 9
        assert t.result.objectives["score"] == curve[-1]
        assert exp.best_so_far() is not t
    assert exp.fidelity_spent() == sum(t.result.metadata["epochs"] for t in exp.trials) < 9 * 20
    assert [t.result for t in JournalReader.of_run(tmp_path).trials] == [t.result for t in exp.trials]


def test_median_pruned_run_resumes_identically(tmp_path) -> None:
    def run(run_dir):
        space = ToySpace()
        evaluator = ToyFidelityEvaluator(space)
        strategy = MedianPruner(space, objective=evaluator.objective, seed=1, strategy="random", warmup=3)
        spec = _spec("median", trials=20, strategy="random", warmup=3)
        exp = Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False)
        exp.run()
        return exp

    full = run(tmp_path / "full")
    lines = journal_path(tmp_path / "full").read_text().splitlines(keepends=True)
    (tmp_path / "cut").mkdir()
    journal_path(tmp_path / "cut").write_text("".join(lines[:9]))
    resumed = run(tmp_path / "cut")
    assert [(t.genotype, t.result) for t in resumed.trials] == [(t.genotype, t.result) for t in full.trials]

from __future__ import annotations

import shutil

import pytest

from nasforge import Budget, JournalError, api
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec


def _spec(**kw) -> ExperimentSpec:
    base = dict(
        space="toy",
        strategy="rea",
        evaluator="toy",
        budget=Budget(trials=25),
        seed=3,
        strategy_options={"population_size": 6, "sample_size": 3},
    )
    base.update(kw)
    return ExperimentSpec(**base)


def test_search_runs_and_journals(tmp_path) -> None:
    outcome = Experiment.from_spec(_spec(), run_dir=tmp_path, progress=False).run()
    assert len(outcome.history) == 25
    reader = JournalReader.of_run(tmp_path)
    assert [t.genotype for t in reader.trials] == [t.genotype for t in outcome.history]
    assert reader.end is not None
    assert reader.header["environment"]["torch"]
    best_value = max(t.result.objectives["score"] for t in outcome.history)
    assert outcome.best_result.objectives["score"] == best_value


def test_same_seed_same_run(tmp_path) -> None:
    a = Experiment.from_spec(_spec(), run_dir=tmp_path / "a", progress=False).run()
    b = Experiment.from_spec(_spec(), run_dir=tmp_path / "b", progress=False).run()
    assert [t.genotype for t in a.history] == [t.genotype for t in b.history]


@pytest.mark.parametrize("kept", [0, 1, 7, 24])
def test_resume_from_truncated_journal_matches_uninterrupted(tmp_path, kept: int) -> None:
    full = Experiment.from_spec(_spec(), run_dir=tmp_path / "full", progress=False).run()
    lines = journal_path(tmp_path / "full").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    journal_path(cut).write_text("".join(lines[: 1 + kept]))  # header + `kept` trials
    resumed = api.resume(cut)
    assert [t.genotype for t in resumed.history] == [t.genotype for t in full.history]
    assert resumed.best == full.best
    trials = JournalReader.of_run(cut).trials
    assert [t.index for t in trials] == list(range(25)), "no trial lost or repeated"


def test_resume_of_finished_run_adds_nothing(tmp_path) -> None:
    Experiment.from_spec(_spec(), run_dir=tmp_path, progress=False).run()
    before = journal_path(tmp_path).read_text()
    api.resume(tmp_path)
    assert journal_path(tmp_path).read_text() == before


def test_journal_from_another_space_is_refused(tmp_path) -> None:
    Experiment.from_spec(_spec(), run_dir=tmp_path, progress=False).run()
    text = journal_path(tmp_path).read_text().replace('"name": "toy"', '"name": "nb201"', 1)
    journal_path(tmp_path).write_text(text)
    with pytest.raises(JournalError, match="from space 'nb201', not 'toy'"):
        Experiment.from_spec(_spec(), run_dir=tmp_path, progress=False).run()


def test_different_settings_are_refused(tmp_path) -> None:
    Experiment.from_spec(_spec(), run_dir=tmp_path, progress=False).run()
    with pytest.raises(JournalError, match="different settings"):
        Experiment.from_spec(_spec(seed=4), run_dir=tmp_path, progress=False).run()


def test_diverging_replay_is_refused(tmp_path) -> None:
    Experiment.from_spec(_spec(budget=Budget(trials=10)), run_dir=tmp_path / "a", progress=False).run()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    lines = journal_path(tmp_path / "b").read_text().splitlines(keepends=True)
    # swap two trial records' genotypes so the strategy's asks no longer match
    journal_path(tmp_path / "b").write_text(
        "".join(
            lines[:1]
            + [lines[2].replace('"index": 1', '"index": 0'), lines[1].replace('"index": 0', '"index": 1')]
            + lines[3:6]
        )
    )
    reader = JournalReader.of_run(tmp_path / "b")
    assert reader.trials[0].genotype != reader.trials[1].genotype  # dedup: trials are distinct
    with pytest.raises(JournalError, match="diverges at trial 0"):
        api.resume(tmp_path / "b")


def test_simulated_budget_stops_search() -> None:
    outcome = api.search("toy", "random", "toy", trials=None, simulated_seconds=20.0, seed=0)
    costs = [t.result.cost for t in outcome.history]
    assert sum(costs[:-1]) < 20.0 <= sum(costs)


def test_dedup_never_evaluates_twice() -> None:
    outcome = api.search("toy", "random", "toy", trials=81, seed=0)
    genotypes = [t.genotype for t in outcome.history]
    assert len(set(genotypes)) == len(genotypes) == 81


def test_exhausted_space_ends_search() -> None:
    outcome = api.search("toy", "random", "toy", trials=500, seed=0)
    assert len(outcome.history) == 81


def test_process_pool_matches_in_process() -> None:
    a = api.search("toy", "random", "toy", trials=12, seed=5, workers=2, executor="process")
    b = api.search("toy", "random", "toy", trials=12, seed=5, workers=2)
    assert [t.genotype for t in a.history] == [t.genotype for t in b.history]
    assert [t.result for t in a.history] == [t.result for t in b.history]


def test_failed_evaluations_are_recorded_not_fatal(tmp_path) -> None:
    from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace

    class Flaky(ToyEvaluator):
        def evaluate(self, g):
            if g.choices[0] == "skip":
                raise RuntimeError("out of memory")
            return super().evaluate(g)

    space = ToySpace()
    ev = Flaky(space)
    from nasforge_search import RandomSearch

    strategy = RandomSearch(space, objective=ev.objective, seed=0)
    exp = Experiment(
        space, strategy, ev, _spec(strategy="random", strategy_options={}), run_dir=tmp_path, progress=False
    )
    outcome = exp.run()
    failed = [t for t in outcome.history if t.result.failed]
    assert failed and all("out of memory" in t.result.error for t in failed)
    assert not outcome.best_result.failed


@pytest.mark.slow
def test_a_training_evaluator_in_a_process_pool_finishes_and_matches_in_process(tmp_path) -> None:
    """A process pool trains (short-train on digits) and gives the in-process results; run in
    subprocesses so a hang fails by timeout instead of stalling the suite."""
    import json
    import subprocess
    import sys

    def run(name: str, *extra: str) -> list[float]:
        argv = ["--threads", "1", "search", "--space", "nb201", "--strategy", "random"]
        argv += ["--evaluator", "short-train", "--train-data", "digits", "--evaluator-option", "epochs=1"]
        argv += ["--build-option", "C=2", "--build-option", "N=1", "--budget-trials", "2", "--seed", "3"]
        argv += ["-q", "--json", "--run-dir", str(tmp_path / name), *extra]
        proc = subprocess.run(
            [sys.executable, "-m", "nasforge", *argv], capture_output=True, text=True, timeout=240
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["trials"] == 2
        trials = JournalReader(tmp_path / name / "journal.jsonl").trials
        return [t.result.objectives["valid_accuracy"] for t in trials]

    assert run("pool", "--executor", "process", "--workers", "2") == run("inprocess")


def test_process_pool_workers_are_spawned_with_the_parents_thread_count() -> None:
    """Regression: forked workers of a parent whose torch thread pool had run hung for ever
    in the training loop's first parallel op (inherited locked OpenMP state); spawned
    workers start clean, and run torch with the parent's thread count."""
    import torch

    from nasforge.run.executors import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers=1)
    try:
        assert pool._pool._mp_context.get_start_method() == "spawn"
        assert pool._pool._initargs[1] == torch.get_num_threads()
    finally:
        pool.close()

"""Asynchronous trials (results told as they arrive, replayed in the order told) and
trials whose worker died (run again, the retry recorded; failed only when it keeps dying).

Out-of-order completion is made deterministic here by :class:`NewestFirst`, an executor
that always finishes its newest submission first, so a resume can be compared trial for
trial with the run it continues.
"""

from __future__ import annotations

import collections
import os
import time
from pathlib import Path
from typing import Any

import pytest

from nasforge import api, get_registry
from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Proposal
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result
from nasforge.kernel.testing.toy import ToyEvaluator
from nasforge.run.budget import Budget
from nasforge.run.executors import (
    RETRIES_KEY,
    Done,
    Executor,
    ExecutorOptions,
    InProcessExecutor,
    ProcessPoolExecutor,
    build_executor,
)
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec

REA = {"population_size": 5, "sample_size": 2}


def _spec(**kw: Any) -> ExperimentSpec:
    base: dict[str, Any] = dict(
        space="toy", strategy="rea", evaluator="toy", budget=Budget(trials=20), seed=4, strategy_options=REA
    )
    base.update(kw)
    return ExperimentSpec(**base)


def _experiment(
    run_dir: Path | None, executor: Executor, *, evaluator: type[Evaluator] | None = None, **kw: Any
) -> Experiment:
    """The spec's run with this executor (and evaluator class), built the way a resume is."""
    spec = _spec(workers=executor.workers, **kw.pop("spec", {}))
    space, ev, strategy, _ = spec.build(get_registry())
    if evaluator is not None:
        ev = evaluator(space)
    return Experiment(space, strategy, ev, spec, executor=executor, run_dir=run_dir, progress=False, **kw)


class NewestFirst(InProcessExecutor):
    """In-process, but the newest submission finishes first: results arrive out of ask
    order, the same way every time."""

    name = "newest-first"

    def __init__(self, workers: int = 3, **_: Any) -> None:
        super().__init__(workers)
        self._stack: collections.deque[tuple[int, Evaluator, Genotype | Proposal]] = collections.deque()
        self._count = 0

    def submit(self, evaluator: Evaluator, g: Genotype | Proposal) -> int:
        self._count += 1
        self._stack.append((self._count, evaluator, g))
        return self._count

    def next_done(self) -> Done:
        ticket, evaluator, g = self._stack.pop()
        return Done(ticket, self.map(evaluator, [g])[0], 0.0)


def _history(outcome: Any) -> list[tuple[Genotype, Result]]:
    return [(t.genotype, t.result) for t in outcome.history]


def _cut(run_dir: Path, into: Path, trials: int) -> None:
    """A copy of the journal as a kill after ``trials`` trials leaves it."""
    lines = journal_path(run_dir).read_text().splitlines(keepends=True)
    into.mkdir()
    journal_path(into).write_text("".join(lines[: 1 + trials]))


def test_out_of_order_run_resumes_exactly(tmp_path: Path) -> None:
    full = _experiment(tmp_path / "full", NewestFirst(), asynchronous=True).run()
    reader = JournalReader.of_run(tmp_path / "full")
    assert reader.header["evaluation"] == "asynchronous"
    assert reader.asked != sorted(reader.asked)  # told out of ask order
    assert sorted(reader.asked) == list(range(20))
    _cut(tmp_path / "full", tmp_path / "cut", 7)
    resumed = _experiment(tmp_path / "cut", NewestFirst()).run()  # mode from the journal
    assert _history(resumed) == _history(full)
    assert JournalReader.of_run(tmp_path / "cut").asked == reader.asked


def test_ended_async_journal_replays_on_any_executor(tmp_path: Path) -> None:
    """The order results were told is the journal's, not the executor's: a FIFO executor
    re-reads (and continues) a LIFO run's journal exactly."""
    full = _experiment(tmp_path / "full", NewestFirst(), asynchronous=True).run()
    lines = journal_path(tmp_path / "full").read_text().splitlines(keepends=True)
    (tmp_path / "open").mkdir()
    journal_path(tmp_path / "open").write_text("".join(lines[:-1]))  # no end record: continued
    again = Experiment.resume(tmp_path / "open", progress=False).run()
    assert _history(again) == _history(full)
    assert Experiment.resume(tmp_path / "full", progress=False).run().history == full.history


def test_async_with_one_worker_is_the_synchronous_run() -> None:
    sync = api.search("toy", "rea", "toy", trials=15, seed=2, strategy_options=REA)
    asy = api.search("toy", "rea", "toy", trials=15, seed=2, strategy_options=REA, asynchronous=True)
    assert _history(asy) == _history(sync)


def test_async_run_learns_between_trials() -> None:
    """With 3 workers, the async run's 4th ask comes after one tell: it differs from the
    synchronous rounds, and its journal still replays."""
    sync = api.search("toy", "rea", "toy", trials=15, seed=2, workers=3, strategy_options=REA)
    asy = api.search(
        "toy", "rea", "toy", trials=15, seed=2, workers=3, strategy_options=REA, asynchronous=True
    )
    assert len(asy.history) == len(sync.history) == 15
    assert [t.index for t in asy.history] == list(range(15))


def test_a_journal_continues_only_in_its_own_mode(tmp_path: Path) -> None:
    _experiment(tmp_path / "a", NewestFirst(), asynchronous=True).run()
    with pytest.raises(JournalError, match="evaluated asynchronously"):
        _experiment(tmp_path / "a", InProcessExecutor(3), asynchronous=False).run()
    api.search("toy", "rea", "toy", trials=6, seed=2, workers=2, strategy_options=REA, run_dir=tmp_path / "s")
    with pytest.raises(JournalError, match="evaluated synchronously"):
        api.search(
            "toy", "rea", "toy", trials=6, seed=2, workers=2, strategy_options=REA,
            run_dir=tmp_path / "s", asynchronous=True,
        )  # fmt: skip


def test_a_reordered_journal_is_refused(tmp_path: Path) -> None:
    """The ask numbers are checksummed: swapping two tells is an edit, not a replay."""
    _experiment(tmp_path / "a", NewestFirst(), asynchronous=True).run()
    path = journal_path(tmp_path / "a")
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"asked": ', '"asked": 1', 1)
    path.write_text("".join(lines))
    with pytest.raises(JournalError, match="checksum"):
        Experiment.resume(tmp_path / "a", progress=False).run()


def test_async_stop_rule_drains_what_is_in_flight(tmp_path: Path) -> None:
    run = _experiment(tmp_path / "a", NewestFirst(), asynchronous=True, stop="plateau:3")
    outcome = run.run()
    assert run.stopped is not None
    assert len(outcome.history) <= run.stopped["trial"] + 1 + 2  # at most the two in flight after it
    again = Experiment.resume(tmp_path / "a", progress=False).run()
    assert again.history == outcome.history


def test_cluster_options_refused_off_cluster() -> None:
    """An executor's own option given to another executor is refused, naming the executor
    that takes it, through the Python API's executor options."""
    with pytest.raises(NasforgeError, match="--ray-address applies to --executor ray"):
        api.search("toy", "random", "toy", trials=2, executor_options={"address": "127.0.0.1:1"})
    with pytest.raises(NasforgeError, match="executor 'process' has no option 'speed'"):
        build_executor(ProcessPoolExecutor, 1, ExecutorOptions(options={"speed": 2}))


# --- a worker that dies -------------------------------------------------------------------
# Each pool start spawns workers that import torch (seconds each on two busy cores), and
# every death rebuilds the pool: one fast test with a single worker, the rest slow.


class KillFirstRun(ToyEvaluator):
    """Kills the process evaluating a victim genotype (never the search's own): the first
    time only, or every time with ``always``. A marker file per genotype remembers."""

    def __init__(self, space: Any, marker_dir: str = "", victims: tuple[str, ...] = (), always: bool = False):
        super().__init__(space)
        self.marker_dir, self.victims, self.always = marker_dir, victims, always
        self.search_pid = os.getpid()

    def evaluate(self, g: Genotype) -> Result:
        key = "-".join(map(str, g.choices))
        if key in self.victims and os.getpid() != self.search_pid:
            marker = Path(self.marker_dir) / key
            if self.always or not marker.exists():
                marker.touch()
                os._exit(1)  # the worker dies mid-trial, as a segfault or the OOM killer would
        time.sleep(0.05)  # long enough that trials overlap in the pool
        return super().evaluate(g)


def _victims(n: int = 2) -> tuple[str, ...]:
    """Genotypes the seeded random search evaluates early (so the test kills real trials)."""
    clean = api.search("toy", "random", "toy", trials=8, seed=1, workers=2)
    return tuple("-".join(map(str, t.genotype.choices)) for t in clean.history[1 : 1 + 2 * n : 2])


def _kill_run(tmp_path: Path, *, always: bool, asynchronous: bool, retries: int = 2) -> Experiment:
    victims = _victims()
    spec = _spec(strategy="random", strategy_options={}, seed=1, budget=Budget(trials=8), workers=2)
    space, _, strategy, _ = spec.build(get_registry())
    evaluator = KillFirstRun(space, str(tmp_path), victims, always=always)
    pool = ProcessPoolExecutor(workers=2, threads=1, retries=retries)
    run = Experiment(
        space, strategy, evaluator, spec, executor=pool, run_dir=tmp_path / "run", progress=False,
        asynchronous=asynchronous,
    )  # fmt: skip
    run.run()
    return run


@pytest.mark.slow
def test_killed_pool_worker_is_replaced_and_its_trial_retried(tmp_path: Path) -> None:
    clean = api.search("toy", "random", "toy", trials=3, seed=1)
    genotypes = [t.genotype for t in clean.history]
    victim = "-".join(map(str, genotypes[1].choices))
    space = get_registry().space("toy")
    pool = ProcessPoolExecutor(workers=1, threads=1)
    try:
        results = pool.map(KillFirstRun(space, str(tmp_path), (victim,)), genotypes)
    finally:
        pool.close()
    assert [r.objectives for r in results] == [t.result.objectives for t in clean.history]
    assert [r.metadata.get(RETRIES_KEY) for r in results] == [None, 1, None]


@pytest.mark.slow
def test_killed_worker_trial_is_retried_and_recorded(tmp_path: Path) -> None:
    clean = api.search("toy", "random", "toy", trials=8, seed=1, workers=2)
    run = _kill_run(tmp_path, always=False, asynchronous=False)
    assert run.outcome is not None
    assert [t.genotype for t in run.outcome.history] == [t.genotype for t in clean.history]
    assert [t.result.objectives for t in run.outcome.history] == [t.result.objectives for t in clean.history]
    victims = set(_victims())
    for trial in JournalReader.of_run(tmp_path / "run").trials:  # journaled, with the retries
        key = "-".join(map(str, trial.genotype.choices))
        assert not trial.result.failed
        if key in victims:
            assert trial.result.metadata[RETRIES_KEY] >= 1


@pytest.mark.slow
def test_trial_that_keeps_killing_its_worker_fails_alone(tmp_path: Path) -> None:
    run = _kill_run(tmp_path, always=True, asynchronous=True, retries=1)
    assert run.outcome is not None
    victims = set(_victims())
    for trial in run.outcome.history:
        key = "-".join(map(str, trial.genotype.choices))
        if key in victims:
            assert trial.result.failed and "worker died" in (trial.result.error or "")
            # run again once after dying alone, or twice when its first death took a neighbour
            # in flight with it (which of the two depends on timing)
            assert trial.result.metadata[RETRIES_KEY] in (1, 2)
        else:
            assert not trial.result.failed, trial.result.error
    assert len(run.outcome.history) == 8


@pytest.mark.slow
def test_cli_async_search_and_resume(cli: Any, tmp_path: Path) -> None:
    argv = ("--space", "toy", "--strategy", "rea", "--evaluator", "toy", "--budget-trials", "10")
    argv += ("--workers", "3", "--seed", "2", "-o", "population_size=5", "-o", "sample_size=2", "--quiet")
    first = cli("search", *argv, "--async", "--run-dir", tmp_path / "r", "--json", ok=True).json()
    assert JournalReader.of_run(tmp_path / "r").header["evaluation"] == "asynchronous"
    again = cli("resume", tmp_path / "r", "--quiet", "--json", ok=True).json()
    assert again["best"] == first["best"] and again["trials"] == 10
    cli("search", *argv, "--sync", "--run-dir", tmp_path / "r").assert_one_line_error("asynchronously")

"""Metric sweeps on several workers (issue 15): same scores whatever runs them, results in
input order, one shared cache that concurrent writers cannot lose entries from, `--all`,
and one-line refusals.

The process-pool tests share one pool (spawning workers that import torch takes seconds);
the NB201 and Ray comparisons are marked slow and share one Ray instance.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import get_registry
from nasforge.kernel.testing.toy import ToySpace
from nasforge.run.executors import Executor, evaluate_safely
from nasforge.tools.scoring import ScoreCache, ScoreKey, ScoreTable, sample_genotypes, score_genotypes
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.parallel import (
    ExecutorSweep,
    InProcessSweep,
    ProcessSweep,
    SweepExecutor,
    chunked,
    make_sweep_executor,
    map_chunks,
)
from tests.cli_run import run_main

TOY_METRICS = ["synflow", "grad_norm", "snip", "params"]


def toy_batch() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    return torch.randn(8, 8, generator=gen), torch.arange(8) % 3


def same(a: ScoreTable, b: ScoreTable) -> bool:
    return a.metrics == b.metrics and all(
        np.array_equal(a.values(m), b.values(m), equal_nan=True)
        and [s.error for s in a.column(m)] == [s.error for s in b.column(m)]
        for m in a.metrics
    )


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessSweep]:
    with ProcessSweep(2) as runner:
        yield runner


# --- the chunking core ------------------------------------------------------------------------
def _double(job: int, chunk: list[int]) -> list[int]:
    return [job * x for x in chunk]


class _Backwards(SweepExecutor):
    """Finishes chunks last-first, as a busy pool may."""

    name = "backwards"

    def run(self, fn: Any, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        for i in reversed(range(len(chunks))):
            yield i, fn(job, chunks[i])


def test_results_come_back_in_input_order_whatever_finishes_first() -> None:
    seen: list[list[int]] = []
    out = map_chunks(
        _Backwards(), _double, 2, list(range(10)), per_task=3, on_chunk=lambda c, _r: seen.append(c)
    )
    assert out == [2 * x for x in range(10)]
    assert seen[0] == [9], "on_chunk is told as chunks finish"
    assert chunked(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert map_chunks(InProcessSweep(), _double, 2, []) == []


def _threads(_job: Any, chunk: list[Any]) -> list[int]:
    return [torch.get_num_threads() for _ in chunk]


def test_in_process_sweeps_score_on_one_thread_and_restore_the_setting() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert map_chunks(InProcessSweep(), _threads, None, [0, 1]) == [1, 1]
        assert torch.get_num_threads() == 2
        assert map_chunks(InProcessSweep(threads=None), _threads, None, [0]) == [2]
    finally:
        torch.set_num_threads(before)


def test_default_chunks_are_several_per_worker_and_bounded() -> None:
    runner = InProcessSweep()
    assert runner.default_per_task(1000) == 1, "in-process: per genotype (fine-grained progress and cache)"
    runner.workers = 2
    assert runner.default_per_task(160) == 10
    assert runner.default_per_task(15625) == 32
    assert runner.default_per_task(3) == 1


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"executor": "threads"}, "unknown executor 'threads'"),
        ({"executor": "process", "workers": 0}, "workers must be an integer >= 1"),
        ({"executor": "inprocess", "workers": 2}, "inprocess executor runs one worker"),
        ({"executor": "process", "address": "auto"}, "runs on this machine"),
    ],
)
def test_bad_runner_choices_are_refused(kwargs: dict[str, Any], needle: str) -> None:
    from nasforge.kernel.errors import NasforgeError

    with pytest.raises(NasforgeError, match=needle):
        make_sweep_executor(**kwargs)


class _MapOnly(Executor):
    """A third party's executor with nothing but ``map``."""

    name = "map-only"

    def map(self, evaluator: Any, genotypes: Sequence[Any]) -> list[Any]:
        return [evaluate_safely(evaluator, g) for g in genotypes]


def test_any_registered_executor_runs_sweeps_through_the_adapter() -> None:
    """Chunks as evaluations: the core's own process executor (submit/next_done) and an
    executor with only map give the in-process results, in order."""
    from nasforge.run.executors import InProcessExecutor

    for executor in (_MapOnly(), InProcessExecutor()):
        assert map_chunks(ExecutorSweep(executor), _double, 3, list(range(7)), per_task=2) == [
            3 * x for x in range(7)
        ]


def _fails(_job: Any, _chunk: list[Any]) -> list[Any]:
    raise RuntimeError("boom")


def test_a_failed_chunk_fails_the_sweep_in_one_line() -> None:
    from nasforge.kernel.errors import NasforgeError

    with pytest.raises(NasforgeError, match="a sweep task failed: RuntimeError: boom"):
        map_chunks(ExecutorSweep(_MapOnly()), _fails, None, [1, 2])


# --- identical scores, shared cache -----------------------------------------------------------
@pytest.mark.slow
def test_process_pool_scores_equal_in_process_and_share_the_cache(pool: ProcessSweep, tmp_path: Path) -> None:
    space = ToySpace()
    cells = sample_genotypes(space, 9, seed=1)
    opts = {"data": toy_batch(), "registry": get_registry(), "seed": 5}
    ref = score_genotypes(space, cells, TOY_METRICS, **opts)
    moved: list[int] = []
    par = score_genotypes(
        space,
        cells,
        TOY_METRICS,
        executor=pool,
        per_task=2,
        cache=tmp_path / "c",
        progress=lambda done, _total, _g: moved.append(done),
        **opts,
    )
    assert same(ref, par) and par.genotypes == ref.genotypes
    assert sorted(moved) == moved and moved[-1] == 9 and len(moved) == 5, "progress per chunk"
    # the parent wrote the workers' scores: an in-process rerun computes nothing
    again = score_genotypes(space, cells, TOY_METRICS, cache=tmp_path / "c", **opts)
    assert same(ref, again)
    assert all(s.cached for row in again.rows for s in row.values())


def test_a_partly_cached_sweep_sends_only_the_missing_scores(pool: ProcessSweep, tmp_path: Path) -> None:
    space = ToySpace()
    cells = sample_genotypes(space, 6, seed=2)
    opts = {"data": toy_batch(), "registry": get_registry(), "cache": tmp_path / "c"}
    score_genotypes(space, cells[:3], ["synflow"], **opts)
    mixed = score_genotypes(space, cells, ["synflow", "params"], executor=pool, **opts)
    assert [row["synflow"].cached for row in mixed.rows] == [True] * 3 + [False] * 3
    assert mixed.metrics == ("synflow", "params") and list(mixed.rows[0]) == ["synflow", "params"]
    assert same(mixed, score_genotypes(space, cells, ["synflow", "params"], data=toy_batch()))


def test_hnas_pool_scores_on_a_process_pool_equal_in_process(pool: ProcessSweep, tmp_path: Path) -> None:
    from nasforge_hnas import PoolCache, PoolScorer, PoolSettings, ScoredPool

    space = ToySpace()
    settings = PoolSettings(batch_size=4, input_shape=(8,), num_classes=3, metric="grad_norm")
    cells = sample_genotypes(space, 7, seed=3)
    ref, par = ScoredPool(), ScoredPool()
    PoolScorer(space, settings, registry=get_registry()).fill(ref, cells)
    scorer = PoolScorer(space, settings, PoolCache(tmp_path / "pool.jsonl"), executor=pool)
    ticks: list[tuple[int, int]] = []
    scorer.fill(par, cells, progress=lambda d, t: ticks.append((d, t)), per_task=3)
    assert par.genotypes == ref.genotypes
    assert np.array_equal(par.metric, ref.metric) and np.array_equal(par.kappa, ref.kappa, equal_nan=True)
    assert ticks[-1] == (7, 7)
    assert len(PoolCache(tmp_path / "pool.jsonl")) == 7, "the parent cached the workers' scores"


def _write(directory: Path, start: int) -> None:
    key = ScoreKey("m", 0, "d", package="test")
    cache = ScoreCache(directory, flush_every=1)  # every put rewrites the shard
    for i in range(start, start + 25):
        cache.put(key, Genotype("toy", "1", (str(i),)), MetricScore("m", float(i)))
    cache.flush()


def test_concurrent_cache_writers_lose_no_entry(tmp_path: Path) -> None:
    """Four writers flush one shard 25 times each, at once: every score survives.

    Threads, not processes, to keep the test fast: each writer opens the lock file itself,
    and ``flock`` locks belong to the open file, so they exclude each other exactly as
    writers in separate processes do."""
    writers = [threading.Thread(target=_write, args=(tmp_path, 100 * k)) for k in range(4)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    cache = ScoreCache(tmp_path)
    key = ScoreKey("m", 0, "d", package="test")
    ids = [i for k in range(4) for i in range(100 * k, 100 * k + 25)]
    lost = [i for i in ids if cache.get(key, Genotype("toy", "1", (str(i),))) is None]
    assert lost == [], "entries lost"
    assert len(cache) == 100
    assert not list(tmp_path.glob("*.part")), "no temporary file left behind"


# --- the command line -----------------------------------------------------------------------
TOY = ["--space", "toy", "--evaluator", "toy", "-m", "synflow", "--build-option", "in_features=3072"]
TOY += ["--batch-size", "4", "--no-cache"]


@pytest.mark.slow
def test_correlate_all_scores_every_cell_with_json_untouched_by_the_bar() -> None:
    code, out, err = run_main("correlate", *TOY, "--all", "--json")  # the bar is on (no -q)
    assert code == 0, err
    import json

    result = json.loads(out)
    assert result["sample"] == 81 and {m["metric"] for m in result["metrics"]} >= {"synflow"}


def test_score_all_quiet_json() -> None:
    code, out, err = run_main(
        "score", "--space", "toy", "--all", "-m", "params", "--no-cache", "-q", "--json"
    )
    assert code == 0, err
    import json

    assert len(json.loads(out)["rows"]) == 81
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["correlate", *TOY, "--all", "--executor", "process", "--workers", "0"], "--workers"),
        (["correlate", *TOY, "--sample", "5", "--executor", "gpu"], "unknown executor 'gpu'"),
        (["correlate", *TOY, "--sample", "5", "--workers", "2"], "inprocess executor runs one worker"),
        (["correlate", *TOY, "--sample", "5", "--all"], "--sample N or --all"),
        (["correlate", "--space", "darts", "--all", "-m", "synflow"], "cannot list its"),
        (["score", "--space", "darts", "--all", "-m", "synflow"], "--all needs an enumerable space"),
        (["score", "--space", "toy", "--all", "--ray-address", "auto"], "runs on this machine"),
        (
            ["search", "--strategy", "hnas", "-o", "steps=1", "--executor", "process", "--workers", "0"],
            "--workers",
        ),
        (["search", "--strategy", "hnas", "-o", "steps=1", "--executor", "many"], "unknown executor 'many'"),
    ],
)
def test_bad_sweep_options_fail_in_one_line(argv: list[str], needle: str) -> None:
    code, _out, err = run_main(*argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], lines[0]


# --- slow: NB201 networks, and Ray -----------------------------------------------------------
NB201 = {"build": {"C": 4, "N": 1}, "batch_size": 8, "seed": 0}
SIX = ["grad_norm", "snip", "grasp", "fisher", "jacob_cov", "synflow"]


@pytest.fixture(scope="module")
def nb201_reference() -> tuple[Any, list[Any], ScoreTable]:
    """In-process scores, computed while this process runs torch on two threads: the
    sweep scores on one (as workers do), so SNIP, GraSP and jacob_cov match to the bit."""
    space = get_registry().get("space", "nb201")()
    cells = sample_genotypes(space, 5, seed=4)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        return space, cells, score_genotypes(space, cells, SIX, registry=get_registry(), **NB201)
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_nb201_six_proxies_identical_on_a_process_pool(pool: ProcessSweep, nb201_reference: Any) -> None:
    space, cells, ref = nb201_reference
    par = score_genotypes(space, cells, SIX, executor=pool, per_task=2, registry=get_registry(), **NB201)
    assert same(ref, par)


@pytest.fixture(scope="module")
def ray_runner() -> Iterator[SweepExecutor]:
    """One local Ray instance for every Ray test (starting one takes 10-20 s), through the
    Ray plugin's registered executor."""
    pytest.importorskip("ray")
    runner = make_sweep_executor("ray", workers=2, registry=get_registry())
    try:
        yield runner
    finally:
        runner.close()


@pytest.mark.slow
def test_nb201_six_proxies_identical_on_ray(
    ray_runner: SweepExecutor, nb201_reference: Any, tmp_path: Path
) -> None:
    space, cells, ref = nb201_reference
    par = score_genotypes(
        space, cells, SIX, executor=ray_runner, per_task=2, cache=tmp_path, registry=get_registry(), **NB201
    )
    assert same(ref, par)
    again = score_genotypes(space, cells, SIX, cache=tmp_path, registry=get_registry(), **NB201)
    assert same(ref, again) and all(s.cached for row in again.rows for s in row.values())


@pytest.mark.slow
def test_hnas_pool_on_ray(ray_runner: SweepExecutor) -> None:
    from nasforge_hnas import PoolScorer, PoolSettings, ScoredPool

    space = ToySpace()
    settings = PoolSettings(batch_size=4, input_shape=(8,), num_classes=3)
    cells = sample_genotypes(space, 5, seed=6)
    ref, par = ScoredPool(), ScoredPool()
    PoolScorer(space, settings).fill(ref, cells)
    PoolScorer(space, settings, executor=ray_runner).fill(par, cells, per_task=2)
    assert np.array_equal(par.metric, ref.metric, equal_nan=True)
    assert np.array_equal(par.kappa, ref.kappa, equal_nan=True)


# --- how the pool starts ----------------------------------------------------------------------
FRESH_PROCESS = """
from nasforge.kernel.registry import get_registry
from nasforge.tools.scoring import sample_genotypes, score_genotypes
from nasforge.tools.scoring.parallel import ProcessSweep
from nasforge.api import load_space

space = load_space("nb201")
cells = sample_genotypes(space, 6, seed=1)
options = {"metrics": ["synflow", "params"], "build": {"C": 4, "N": 1}, "batch_size": 4, "seed": 2}
with ProcessSweep(2) as pool:  # made first, as a command line makes it: nothing has run yet
    here = score_genotypes(space, cells, **options)
    there = score_genotypes(space, cells, executor=pool, per_task=2, **options)
    print(pool.start_method)
print(all(a[m].value == b[m].value for a, b in zip(here.rows, there.rows) for m in ("synflow", "params")))
"""


@pytest.mark.slow
def test_a_fresh_process_forks_its_workers_and_they_score_alike() -> None:
    """A command line that has only imported torch forks its workers (no start-up cost)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["fork", "True"], out.stderr


@pytest.mark.slow
def test_a_process_with_threads_spawns_its_workers() -> None:
    """A thread started since import (an OpenMP pool, a helper) could hold a lock a fork
    copies: such a process spawns."""
    from nasforge.tools.scoring.parallel import fork_is_safe

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert not fork_is_safe()
        with ProcessSweep(1) as pool:
            assert pool.start_method == "spawn"
            assert map_chunks(pool, _double, 3, [1, 2, 3]) == [3, 6, 9]
    finally:
        stop.set()
        helper.join()


def test_default_chunks_shrink_towards_the_end_so_workers_finish_together() -> None:
    from nasforge.tools.scoring.parallel import guided

    items = list(range(1500))
    chunks = guided(items, 32, 2)
    sizes = [len(c) for c in chunks]
    assert [x for c in chunks for x in c] == items, "every item once, in order"
    assert max(sizes) == 32 and sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert sum(s == 32 for s in sizes) >= 40, "full chunks until the tail"
    assert guided(items, 32, 1) == chunked(items, 32), "one worker: nothing to balance"
    runner = InProcessSweep()
    runner.workers = 2
    seen: list[int] = []
    map_chunks(runner, _double, 1, items, on_chunk=lambda chunk, _: seen.append(len(chunk)))
    assert seen == sizes, "map_chunks cuts a default sweep this way"
    seen.clear()
    map_chunks(runner, _double, 1, items, per_task=32, on_chunk=lambda chunk, _: seen.append(len(chunk)))
    assert set(seen[:-1]) == {32}, "a caller's per_task is kept"


PREPARED_BEFORE_THE_FORK = """
import os
from nasforge.kernel.parallelism import Parallelism
from nasforge.tools.scoring.parallel import map_chunks, sweep_for

STATE = {}

def fn(job, chunk):
    if not chunk:  # prepare: in the parent, once, before the workers are forked
        STATE["by"] = os.getpid()
        return []
    return [(STATE.get("by"), os.getpid()) for _ in chunk]

with sweep_for(Parallelism("process", 2)) as runner:
    out = map_chunks(runner, fn, None, list(range(40)))
parent = os.getpid()
print(all(by == parent for by, _ in out), all(pid != parent for _, pid in out))
"""


@pytest.mark.slow
def test_a_forked_pool_inherits_what_the_chunk_function_prepared() -> None:
    """A pool made on a sweep's first chunk calls ``fn(job, [])`` in the parent before it
    forks: the workers start with the network factory instead of each making one."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", PREPARED_BEFORE_THE_FORK], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "True"], out.stderr


@pytest.mark.slow
def test_prepare_is_skipped_where_workers_are_spawned() -> None:
    calls: list[int] = []
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        with ProcessSweep(1, prepare=lambda: calls.append(1)) as pool:
            assert pool.start_method == "spawn" and calls == [], "a spawned worker would not see it"
    finally:
        stop.set()
        helper.join()

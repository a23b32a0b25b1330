"""The device sweep pipeline, run on the CPU: builders pack networks into shared-memory
slots, this process scores them. What a GPU machine runs must first hold here:

* one network per slot gives exactly (bit for bit) the scores of the per-network path,
  whether a builder thread or a process pool builds;
* stacks give the per-network scores up to float32 rounding, with the same flags; a stack
  that runs out of memory is split and recorded; a metric that fails on a stack is scored
  network by network; stacked scores are cached apart;
* the per-stage times are recorded, and no slot file is left behind.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from nasforge import get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.tools.scoring import ScoreTable, build_model, sample_genotypes, score_genotypes
from nasforge.tools.scoring import pipeline as pipeline_module
from nasforge.tools.scoring.packing import load_views, pack_into, packing_of
from nasforge.tools.scoring.parallel import ProcessSweep
from nasforge.tools.scoring.pipeline import StageTimes
from nasforge.tools.scoring.slots import SlotRing, attach

TINY = {"C": 4, "N": 1}
METRICS = ["synflow", "grad_norm", "snip", "grasp", "fisher", "jacob_cov", "naswot", "params"]
SETTINGS = {"data": "gaussian", "batch_size": 8, "build": TINY, "seed": 1}
ALL_NONE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


def space():
    return get_registry().space("nb201")


@pytest.fixture(scope="module")
def cells() -> list:
    sp = space()
    return [sp.parse(ALL_NONE), *sample_genotypes(sp, 9, seed=3)]


@pytest.fixture(scope="module")
def reference(cells) -> ScoreTable:
    torch.set_num_threads(1)
    return score_genotypes(space(), cells, METRICS, **SETTINGS)


def identical(a: ScoreTable, b: ScoreTable) -> None:
    for m in a.metrics:
        assert np.array_equal(a.values(m), b.values(m), equal_nan=True), m
        assert [s.flag for s in a.column(m)] == [s.flag for s in b.column(m)], m


def close(a: ScoreTable, b: ScoreTable, rel: float) -> None:
    for m in a.metrics:
        assert [s.flag for s in a.column(m)] == [s.flag for s in b.column(m)], m
        for x, y in zip(a.values(m), b.values(m), strict=True):
            if math.isfinite(x):
                assert abs(x - y) <= rel * max(abs(x), abs(y)), (m, x, y)


def leftover_slots() -> list[str]:
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return [f for f in os.listdir(shm) if f.startswith(f"nasforge-sweep-{os.getpid()}-")] if shm else []


def test_one_network_per_slot_equals_the_per_network_path(cells, reference):
    stages = StageTimes()
    got = score_genotypes(space(), cells, METRICS, pipeline=True, stack=0, stages=stages, **SETTINGS)
    identical(reference, got)
    assert stages.networks == len(cells) and stages.stacks == 0
    assert stages.build > 0 and stages.score > 0 and stages.builders == 1
    assert "networks" in stages.summary()
    assert not leftover_slots()


@pytest.mark.slow
def test_a_process_pool_builds_for_the_scoring_process(cells, reference):
    with ProcessSweep(2) as pool:
        stages = StageTimes()
        got = score_genotypes(
            space(), cells, METRICS, executor=pool, pipeline=True, stages=stages, **SETTINGS
        )
        identical(reference, got)
        assert stages.builders == 2 and stages.build > 0
        stacked_here = score_genotypes(space(), cells, METRICS, pipeline=True, stack=4, **SETTINGS)
        stacked_pool = score_genotypes(
            space(), cells, METRICS, executor=pool, pipeline=True, stack=4, **SETTINGS
        )
    identical(stacked_here, stacked_pool)  # stacks packed in other processes: the same bytes
    assert not leftover_slots()


@pytest.mark.slow
def test_stacks_give_the_per_network_scores(cells, reference):
    stages = StageTimes()
    got = score_genotypes(space(), cells, METRICS, pipeline=True, stack=4, stages=stages, **SETTINGS)
    close(reference, got, 1e-4)  # float32: grouped convolutions round differently
    # params does not stack: scored one network at a time, exactly
    assert np.array_equal(reference.values("params"), got.values("params"), equal_nan=True)
    assert stages.stacks == 3 and stages.stack_size == 4 and stages.networks == len(cells)


@pytest.mark.slow
def test_metrics_that_do_not_stack_run_one_network_at_a_time(cells):
    """The NTK family takes its own kernels: per network, exactly, beside stacked metrics."""
    alone = score_genotypes(space(), cells[:3], ["ntk_trace", "synflow"], **SETTINGS)
    got = score_genotypes(space(), cells[:3], ["ntk_trace", "synflow"], pipeline=True, stack=3, **SETTINGS)
    assert np.array_equal(alone.values("ntk_trace"), got.values("ntk_trace"), equal_nan=True)


def test_an_out_of_memory_stack_is_split_and_recorded(cells, monkeypatch):
    real = pipeline_module.score_stack

    def small_device(module, count, *args, **kwargs):
        if count > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(module, count, *args, **kwargs)

    whole = score_genotypes(space(), cells, ["synflow", "snip"], pipeline=True, stack=8, **SETTINGS)
    monkeypatch.setattr(pipeline_module, "score_stack", small_device)
    stages = StageTimes()
    got = score_genotypes(
        space(), cells, ["synflow", "snip"], pipeline=True, stack=8, stages=stages, **SETTINGS
    )
    assert stages.splits == [(8, 4), (4, 2)]  # then every later stack in twos at once
    close(whole, got, 1e-5)


def test_a_network_that_fits_no_stack_is_scored_alone(cells, reference, monkeypatch):
    def no_room(*_args, **_kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(pipeline_module, "score_stack", no_room)
    stages = StageTimes()
    got = score_genotypes(space(), cells[:3], ["synflow"], pipeline=True, stack=2, stages=stages, **SETTINGS)
    assert stages.alone == 3 and stages.splits == [(2, 1)]
    assert np.array_equal(got.values("synflow"), reference.values("synflow")[:3], equal_nan=True)


def test_a_metric_failing_on_a_stack_is_scored_network_by_network(cells, reference, monkeypatch):
    from nasforge_zerocost.gradient import Snip

    def broken(self, passes):
        raise RuntimeError("not on stacks today")

    monkeypatch.setattr(Snip, "score_stacked", broken)
    stages = StageTimes()
    got = score_genotypes(
        space(), cells, ["snip", "synflow"], pipeline=True, stack=5, stages=stages, **SETTINGS
    )
    assert stages.alone == len(cells)
    assert np.array_equal(got.values("snip"), reference.values("snip"), equal_nan=True)


@pytest.mark.slow
def test_stacked_scores_are_cached_apart(cells, tmp_path: Path):
    cache = tmp_path / "scores"
    stacked = score_genotypes(space(), cells, ["synflow"], pipeline=True, stack=4, cache=cache, **SETTINGS)
    again = StageTimes()
    score_genotypes(
        space(), cells, ["synflow"], pipeline=True, stack=4, cache=cache, stages=again, **SETTINGS
    )
    assert again.networks == 0  # every score served by the cache
    alone = score_genotypes(space(), cells, ["synflow"], cache=cache, **SETTINGS)
    assert not any(s.cached for s in alone.column("synflow"))  # a stack's score is not one network's
    close(stacked, alone, 1e-9)


def test_a_pipeline_needs_a_local_runner(cells):
    from nasforge.run.executors import Executor
    from nasforge.tools.scoring.parallel import ExecutorSweep

    class Remote(Executor):
        name = "remote"

        def map(self, evaluator, genotypes):  # pragma: no cover - refused before any work
            raise AssertionError

    with pytest.raises(NasforgeError, match="local pool"):
        score_genotypes(space(), cells[:2], ["synflow"], executor=ExecutorSweep(Remote()), pipeline=True)


def test_a_network_bigger_than_its_slot_travels_apart(cells, reference, monkeypatch):
    monkeypatch.setattr(pipeline_module, "_slot_bytes", lambda job, first: 4096)
    got = score_genotypes(space(), cells[:4], ["grad_norm"], pipeline=True, stack=0, **SETTINGS)
    assert np.array_equal(got.values("grad_norm"), reference.values("grad_norm")[:4], equal_nan=True)


def test_packed_networks_load_bit_identical_and_train():
    """Weights through a packed buffer are the same bits; every tensor has a version counter
    of its own, so a train-mode forward (BatchNorm updates buffers) still back-propagates."""
    sp = space()
    g = sample_genotypes(sp, 1, seed=9)[0]
    net = build_model(sp, g, seed=2, build=TINY).train()
    arena = torch.zeros(packing_of(net).nbytes, dtype=torch.uint8)
    packing = pack_into(net, arena)
    with torch.device("meta"):
        skeleton = sp.build(g, **TINY)
    loaded = load_views(skeleton, packing, arena.clone())
    for (n, a), (m, b) in zip(net.state_dict().items(), loaded.state_dict().items(), strict=True):
        assert n == m and a.dtype == b.dtype and torch.equal(a, b), n
    x = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    loaded(x).sum().backward()
    assert all(p.grad is not None for p in loaded.parameters() if p.requires_grad)


def test_slots_are_shared_with_other_mappings_and_removed():
    with SlotRing(2, 100) as ring:
        assert ring.nbytes == 4096 and ring.slot(1).shape == (4096,)
        mapped = attach(ring.spec)
        ring.slot(1)[:3] = torch.tensor([1, 2, 3], dtype=torch.uint8)
        assert mapped[1][:3].tolist() == [1, 2, 3]
        assert os.path.exists(ring.spec.path)
    assert not os.path.exists(ring.spec.path)


def test_what_stacks_by_default():
    from nasforge.tools.scoring.pipeline import STACK_DATA_FREE, stacking_for
    from nasforge.tools.scoring.sweep import resolve_metrics

    metrics = resolve_metrics(["synflow", "grad_norm", "ntk_trace"])
    assert stacking_for(space(), metrics, None, "cpu") == (0, frozenset())
    # on a GPU the data-free metrics (launch-bound: one input per network); others when asked
    assert stacking_for(space(), metrics, None, "cuda") == (STACK_DATA_FREE, {"synflow"})
    assert stacking_for(space(), metrics, 8, "cpu") == (8, {"synflow", "grad_norm"})
    assert stacking_for(space(), metrics, 0, "cuda") == (0, frozenset())
    toy = get_registry().space("toy")
    assert stacking_for(toy, metrics, 8, "cuda") == (0, frozenset())
    with pytest.raises(ValueError, match="stack"):
        stacking_for(space(), metrics, -1, "cpu")


@pytest.mark.slow
def test_a_large_gpu_sweep_in_this_process_builds_in_processes():
    """One builder thread makes a few hundred networks a second: a GPU sweep of many starts
    builder processes (the scoring stays in this process); the CPU and small sweeps do not."""
    from nasforge.tools.scoring.parallel import InProcessSweep
    from nasforge.tools.scoring.sweep import AUTO_BUILDERS_FROM, _builders

    with _builders(InProcessSweep(), space(), TINY, "cuda", AUTO_BUILDERS_FROM) as pool:
        assert isinstance(pool, ProcessSweep) and pool.workers >= 1
    with _builders(InProcessSweep(), space(), TINY, "cuda", 10) as pool:
        assert pool is None
    with _builders(InProcessSweep(), space(), TINY, "cpu", 10_000) as pool:
        assert pool is None


@pytest.mark.slow
def test_workers_on_a_gpu_mean_builder_processes():
    """`--device cuda --workers N` (no --executor): N local processes build for this one."""
    from nasforge.tools.scoring.api import _sweep_runner

    registry = get_registry()
    with _sweep_runner("inprocess", 2, None, registry, space(), {}, "cuda") as runner:
        assert isinstance(runner, ProcessSweep) and runner.workers == 2
    with pytest.raises(NasforgeError, match="one worker"):  # on the CPU, as before
        _sweep_runner("inprocess", 2, None, registry, space(), {}, "cpu")

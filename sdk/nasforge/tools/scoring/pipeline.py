"""A sweep on a GPU: networks built by CPU processes, scored by the one process on the device.

Scoring a network on a GPU takes milliseconds; building it (Python module construction and
weight initialisation) takes as long again on the CPU, and moving it tensor by tensor
longer still, while the GPU waits. And N worker processes that each score on the GPU open N
CUDA contexts and fight over one device. So a device sweep is a pipeline:

* **builders** (the worker processes of ``--workers N``, or one thread of this process
  when there are none) build each network with the space's sweep factory from the sweep's
  seed (exactly :func:`~nasforge.kernel.seeding.seeded_build`'s weights) and pack its
  tensors into a slot of shared memory (:mod:`~nasforge.tools.scoring.slots`,
  :mod:`~nasforge.tools.scoring.packing`);
* **this process** owns the device: it copies a slot to the device in one copy, points a
  network of the same structure at the copy (no per-tensor moves, no initialisation) and
  scores it. Slots are few, so building runs ahead of scoring by a bounded amount
  (prefetch) and the two overlap.

Where the space offers a :class:`~nasforge.kernel.search_space.NetworkStack` and a metric
scores stacks (:mod:`~nasforge.tools.scoring.stacked`), a slot holds a whole stack of
networks, packed side by side by several builders at once, and the scorer runs them as
one module: a few launches for K networks instead of K times as many. Networks are
stacked in the order of their choices, so a stack's networks share the ops of their
first edges and the stacked module computes fewer unused ops. A stack that runs out of
device memory is split in halves (the size that fitted is kept for the next stacks); a
metric that fails on a stack is scored network by network for it, so a bad network is
flagged as it is in any sweep. A network that cannot be built is flagged with the build's
error (:func:`~nasforge.tools.scoring.outcome.unbuilt_scores`) and the sweep goes on, as
every runner's does.

The cache is written in this process only, as every sweep's is. :class:`StageTimes`
records where the time went (build, pack, wait, move, arrange, score, cache).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import math
import pickle
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Metric
from nasforge.kernel.network_factory import build_network, network_factory
from nasforge.kernel.network_stack import NetworkStack, stacking
from nasforge.kernel.search_space import STACK, SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.backends import is_out_of_memory
from nasforge.tools.scoring.factories import thread_factory
from nasforge.tools.scoring.outcome import MetricScore, unbuilt_error, unbuilt_scores
from nasforge.tools.scoring.packing import Packing, load_views, pack_into, packing_of
from nasforge.tools.scoring.scorer import metric_label, score_model
from nasforge.tools.scoring.slots import SlotRing, SlotSpec, attach
from nasforge.tools.scoring.stacked import can_stack, score_stack

#: Networks per stack when the caller does not say: data-free metrics alone (synflow runs
#: on one all-ones input per network) and the metrics that run the batch through the
#: network (their activations, kept for the backward passes, are ~50x larger).
STACK_DATA_FREE = 64
STACK_WITH_DATA = 16
#: Slots of a network-per-slot sweep beyond the builders' count: the prefetch depth.
EXTRA_SLOTS = 2
#: Slots of a stacked sweep (one being scored, the others being filled).
STACK_SLOTS = 3


@attrs.define
class StageTimes:
    """Where a device sweep's seconds went.

    ``build`` and ``pack`` are the builders' (summed over processes, so they can exceed the
    wall time); the rest are this process's: waiting for a built slot, copying it to the
    device (``move``), pointing a module at it (``arrange``), the metrics (``score``: their
    device work included, as their numbers are read back) and cache writes (``cache``).
    """

    build: float = 0.0
    pack: float = 0.0
    wait: float = 0.0
    move: float = 0.0
    arrange: float = 0.0
    score: float = 0.0
    cache: float = 0.0
    wall: float = 0.0
    networks: int = 0
    stacks: int = 0
    #: Networks of a stack scored alone (a metric failed on their stack).
    alone: int = 0
    #: Out-of-memory splits of a stack: (networks tried, networks next).
    splits: list[tuple[int, int]] = attrs.Factory(list)
    stack_size: int = 0
    builders: int = 0
    pinned: bool = False

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def summary(self) -> str:
        """One line: the scorer's split of the wall time, and the builders' CPU seconds."""
        own = ("wait", "move", "arrange", "score", "cache")
        parts = ", ".join(f"{k} {getattr(self, k):.2f} s" for k in own)
        rest = self.wall - sum(getattr(self, k) for k in own)
        stacks = f", {self.stacks} stacks of up to {self.stack_size}" if self.stacks else ""
        splits = f", out-of-memory splits {self.splits}" if self.splits else ""
        return (
            f"{self.networks} networks in {self.wall:.2f} s{stacks}: {parts}, other {rest:.2f} s; "
            f"builders ({self.builders}) build {self.build:.2f} s, pack {self.pack:.2f} s; "
            f"pinned {self.pinned}{splits}"
        )


# --- the builders' side ---------------------------------------------------------------------
@attrs.frozen(eq=False)
class BuildJob:
    """What every build task of one sweep phase shares (picklable, small)."""

    space: SearchSpace
    build: dict[str, Any]
    seed: int
    ring: SlotSpec
    #: Networks per stack; 0 packs one network per slot.
    stack: int = 0


#: (slot, first network's place in it, genotypes).
BuildTask = tuple[int, int, tuple[Genotype, ...]]


@attrs.frozen(eq=False)
class Built:
    """A filled slot (or part of one): the layout of a lone network, and the seconds spent."""

    slot: int
    packing: Packing | None
    #: A lone network too big for its slot, packed in a buffer of its own instead.
    inline: torch.Tensor | None
    build_seconds: float
    pack_seconds: float
    #: Networks that could not be built, by their place in the slot: the build's error.
    unbuilt: dict[int, str] = attrs.Factory(dict)


_STACKS: dict[tuple[bytes, str, int], NetworkStack] = {}
_STACKS_LOCK = threading.Lock()


def network_stack(space: SearchSpace, build: dict[str, Any], cells: int) -> NetworkStack:
    """The space's stack of ``cells`` networks for ``build``, made once per process."""
    key = (pickle.dumps(space), json.dumps(build, sort_keys=True, default=str), cells)
    with _STACKS_LOCK:
        stack = _STACKS.get(key)
        if stack is None:
            if len(_STACKS) >= 4:
                _STACKS.clear()
            stack = _STACKS[key] = stacking(space).network_stack(cells, **build)
        return stack


def build_into_slot(job: BuildJob, task: BuildTask) -> Built:
    """Build the task's networks from the sweep's seed and pack them into its slot (in a
    worker process, or the builder thread of this one)."""
    slot, start, genotypes = task
    factory = thread_factory(job.space, job.build)
    arena = attach(job.ring)[slot]
    built = packed = 0.0
    unbuilt: dict[int, str] = {}
    if job.stack:
        stack = network_stack(job.space, job.build, job.stack)
        for i, g in enumerate(genotypes, start):
            t0 = time.perf_counter()
            try:
                net = factory.build(g, job.seed)
            except Exception as exc:  # noqa: BLE001 - its place is scored as unbuilt, the rest go on
                unbuilt[i] = unbuilt_error(exc)
                built += time.perf_counter() - t0
                continue
            t1 = time.perf_counter()
            stack.pack(i, g, net, arena)
            built, packed = built + t1 - t0, packed + time.perf_counter() - t1
        return Built(slot, None, None, built, packed, unbuilt)
    (g,) = genotypes
    t0 = time.perf_counter()
    try:
        net = factory.build(g, job.seed)
    except Exception as exc:  # noqa: BLE001 - one network that cannot be built must not end the sweep
        return Built(slot, None, None, time.perf_counter() - t0, 0.0, {start: unbuilt_error(exc)})
    t1 = time.perf_counter()
    inline = None
    try:
        packing = pack_into(net, arena)
    except ValueError:  # bigger than the slot: a buffer of its own (pickled back)
        inline = torch.empty(packing_of(net).nbytes, dtype=torch.uint8)
        packing = pack_into(net, inline)
    return Built(slot, packing, inline, t1 - t0, time.perf_counter() - t1)


class _ThreadBuilders:
    """One builder thread of this process: a device sweep without worker processes still
    builds the next network while the device scores this one."""

    workers = 1

    def __init__(self) -> None:
        self._pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nasforge-build")

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


# --- the scorer's side ----------------------------------------------------------------------
@attrs.define(eq=False)
class _Unit:
    """One slot's worth of work: a lone network or a stack, and its items' places."""

    items: list[int]
    genotypes: list[Genotype]
    tasks: list[BuildTask] = attrs.Factory(list)
    slot: int = -1
    remaining: int = 0
    built: list[Built] = attrs.Factory(list)


class _Scorer:
    """This process's half: slots to the device, modules pointed at them, metrics run."""

    def __init__(self, job: Any, ring: SlotRing, times: StageTimes) -> None:
        self.job = job
        self.ring = ring
        self.times = times
        self.device = torch.device(job.ctx.device)
        self.batch = (job.x.to(self.device), job.y.to(self.device))
        self.staging = torch.empty(ring.nbytes, dtype=torch.uint8, device=self.device)
        self.by_label = {metric_label(m): m for m in job.metrics}
        self.factory = network_factory(job.space, job.build)  # this process's own: arrange only
        self.stack: NetworkStack | None = None
        self.stack_metrics: list[Metric] = []
        #: The stack size that fitted in device memory (after a split), else None.
        self.fits: int | None = None
        self._modules: dict[tuple[int, int], nn.Module] = {}
        self._copied: Any = None

    def _move(self, source: torch.Tensor, nbytes: int) -> None:
        start = time.perf_counter()
        self.staging[:nbytes].copy_(source[:nbytes], non_blocking=self.ring.pinned)
        if self.ring.pinned and self.device.type == "cuda":  # asynchronous: its end is marked
            self._copied = torch.cuda.Event()
            self._copied.record()
        self.times.move += time.perf_counter() - start

    def settle(self) -> None:
        """Wait until the last slot's copy is done, so the slot may be written again (a
        metric that reads no number back never waited for it)."""
        if self._copied is not None:
            self._copied.synchronize()
            self._copied = None

    def _structure(self, g: Genotype) -> nn.Module:
        """A network of ``g``'s structure whose tensors are about to be re-pointed."""
        arrange = getattr(self.factory, "arrange", None)
        if callable(arrange):
            return arrange(g)
        with torch.device("meta"):
            return build_network(self.job.space, g, self.job.build).train()

    def network(self, unit: _Unit, labels: Sequence[str]) -> dict[str, MetricScore]:
        (built,) = unit.built
        if built.unbuilt:
            (error,) = built.unbuilt.values()
            return unbuilt_scores(labels, error)
        assert built.packing is not None
        if built.inline is None:
            self._move(self.ring.slot(built.slot), built.packing.nbytes)
            arena = self.staging
        else:  # too big for a slot: a device buffer of its own
            start = time.perf_counter()
            arena = built.inline.to(self.device)
            self.times.move += time.perf_counter() - start
        start = time.perf_counter()
        net = load_views(self._structure(unit.genotypes[0]), built.packing, arena)
        self.times.arrange += time.perf_counter() - start
        start = time.perf_counter()
        out = score_model(
            net, self.batch, [self.by_label[k] for k in labels], ctx=self.job.ctx, shared=self.job.shared
        )
        self.times.score += time.perf_counter() - start
        return out

    def alone(self, g: Genotype, labels: Sequence[str]) -> dict[str, MetricScore]:
        """One network built here and moved as a whole: the fallback of a stack's network."""
        self.times.alone += 1
        try:
            net = seeded_build(lambda: build_network(self.job.space, g, self.job.build), self.job.seed)
        except Exception as exc:  # noqa: BLE001 - flagged as in any sweep
            return unbuilt_scores(labels, exc)
        start = time.perf_counter()
        out = score_model(
            net.train().to(self.device),
            self.batch,
            [self.by_label[k] for k in labels],
            ctx=self.job.ctx,
            shared=self.job.shared,
        )
        self.times.score += time.perf_counter() - start
        return out

    def _stack_module(self, start: int, count: int) -> nn.Module:
        key = (start, count)
        module = self._modules.get(key)
        if module is None:
            assert self.stack is not None
            module = self._modules[key] = self.stack.module(self.staging, start, count)
        return module

    def stacked(self, unit: _Unit) -> list[dict[str, MetricScore]]:
        """Every network of a stack under the stacked metrics (in sub-stacks after an
        out-of-memory split; alone for a metric that fails on a stack)."""
        assert self.stack is not None
        self._move(self.ring.slot(unit.slot), self.stack.nbytes)
        n = len(unit.genotypes)
        # networks that could not be built: their places hold stale weights, their own
        # (separate) scores are thrown away and never scored alone
        unbuilt = {i: error for b in unit.built for i, error in b.unbuilt.items()}
        rows: list[dict[str, MetricScore]] = [{} for _ in range(n)]
        start = 0
        while start < n:
            count = min(self.fits or self.stack.cells, n - start)
            t0 = time.perf_counter()
            module = self._stack_module(start, count)
            self.stack.arrange(module, unit.genotypes[start : start + count])
            t1 = time.perf_counter()
            self.times.arrange += t1 - t0
            try:
                part, failed = score_stack(
                    module, count, count, self.batch, self.stack_metrics, ctx=self.job.ctx
                )
            except (RuntimeError, MemoryError) as exc:
                self.times.score += time.perf_counter() - t1
                if not is_out_of_memory(exc):
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                if count == 1:  # not even one network as a stack: alone, chunking its batch
                    if start not in unbuilt:
                        labels = [metric_label(m) for m in self.stack_metrics]
                        rows[start] = self.alone(unit.genotypes[start], labels)
                    start += 1
                    continue
                self.fits = max(1, count // 2)
                self.times.splits.append((count, self.fits))
                continue
            self.times.score += time.perf_counter() - t1
            for i, row in enumerate(part):
                rows[start + i] = row
            if failed:
                for i in range(count):
                    if start + i not in unbuilt:
                        rows[start + i].update(self.alone(unit.genotypes[start + i], list(failed)))
            start += count
        self.times.stacks += 1
        labels = [metric_label(m) for m in self.stack_metrics]
        for i, error in unbuilt.items():
            rows[i] = unbuilt_scores(labels, error)
        return rows


def _in_order(g: Genotype) -> tuple[str, ...]:
    return tuple(str(c) for c in g.choices)


def stacking_for(
    space: SearchSpace, metrics: Sequence[Metric], stack: int | None, device: str
) -> tuple[int, frozenset[str]]:
    """Networks per stack for a sweep of ``metrics`` on ``space``, and the metrics stacked.

    ``stack`` None chooses: on a CUDA device, where the space offers stacks, the data-free
    metrics that score stacks (synflow: one input per network, so a network's kernels are
    tiny and its launches dominate) in stacks of :data:`STACK_DATA_FREE`; on the CPU none
    (one network at a time is faster there). ``stack`` K > 0 stacks every metric that
    scores stacks, K at a time (:data:`STACK_WITH_DATA` is a size that suits a batch of 64
    at NAS-Bench-201's size on a 80 GB GPU; an out-of-memory stack is split anyway); 0 none.
    """
    stackable = [m for m in metrics if can_stack(m)]
    if stack is not None and (isinstance(stack, bool) or not isinstance(stack, int) or stack < 0):
        raise ValueError(f"stack must be a number of networks >= 0, got {stack!r}")
    if STACK not in getattr(space, "capabilities", frozenset()) or not stackable or stack == 0:
        return 0, frozenset()
    if stack is None:
        if torch.device(device).type != "cuda":
            return 0, frozenset()
        free = frozenset(metric_label(m) for m in stackable if not m.info.needs_data)
        return (STACK_DATA_FREE, free) if free else (0, frozenset())
    return stack, frozenset(metric_label(m) for m in stackable)


def run_pipeline(
    builders: Any,
    job: Any,
    items: Sequence[tuple[Genotype, tuple[str, ...]]],
    *,
    stack: int = 0,
    stacked: frozenset[str] = frozenset(),
    on_chunk: Callable[[list[Any], list[dict[str, MetricScore]]], None] | None = None,
    times: StageTimes | None = None,
) -> list[dict[str, MetricScore]]:
    """Scores of ``items`` (genotype, labels it needs) under ``job`` (a
    :class:`~nasforge.tools.scoring.sweep.ScoreJob`), built by ``builders`` (anything with
    ``submit(fn, *args)`` and ``workers``: a :class:`~nasforge.tools.scoring.parallel.ProcessSweep`;
    None for a builder thread of this process) and scored here; results in input order.

    ``stack`` networks per stack for the metrics labelled in ``stacked`` (each must score
    stacks); every other metric one network at a time. ``on_chunk(items, results)`` is
    told of items as they finish.
    """
    times = times if times is not None else StageTimes()
    started = time.perf_counter()
    own = builders is None
    pool = _ThreadBuilders() if own else builders
    before = torch.get_num_threads()
    if own and torch.device(job.ctx.device).type == "cpu" and before != 1:
        torch.set_num_threads(1)  # as InProcessSweep: the same scores as every other runner
    times.builders = max(1, int(getattr(pool, "workers", 1)))
    stacked = stacked if stack and job.shared else frozenset()
    results: list[dict[str, MetricScore]] = [{} for _ in items]
    left = [2 if set(labels) & stacked and set(labels) - stacked else 1 for _, labels in items]

    def finished(unit: _Unit, rows: list[dict[str, MetricScore]]) -> None:
        done = []
        for i, row in zip(unit.items, rows, strict=True):
            wanted = items[i][1]
            results[i].update({k: v for k, v in row.items() if k in wanted})
            left[i] -= 1
            if left[i] == 0:
                done.append(i)
        times.networks += len(done)
        if on_chunk is not None and done:
            t0 = time.perf_counter()
            on_chunk([items[i] for i in done], [results[i] for i in done])
            times.cache += time.perf_counter() - t0

    try:
        in_stacks = [i for i, (_, labels) in enumerate(items) if set(labels) & stacked]
        in_stacks.sort(key=lambda i: _in_order(items[i][0]))
        if in_stacks:
            times.stack_size = stack
            _stack_phase(pool, job, items, in_stacks, stack, stacked, times, finished)
        alone = [i for i, (_, labels) in enumerate(items) if set(labels) - stacked]
        if alone:
            _network_phase(pool, job, items, alone, stacked, times, finished)
    finally:
        if own:
            pool.close()
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
        times.wall += time.perf_counter() - started
    return results


def _stack_phase(
    pool: Any,
    job: Any,
    items: Sequence[tuple[Genotype, tuple[str, ...]]],
    order: list[int],
    size: int,
    stacked: frozenset[str],
    times: StageTimes,
    finished: Callable[[_Unit, list[dict[str, MetricScore]]], None],
) -> None:
    stack = network_stack(job.space, job.build, size)
    workers = max(1, int(getattr(pool, "workers", 1)))
    slots = STACK_SLOTS if workers > 1 else 2
    parts = max(1, min(size, math.ceil(workers / (slots - 1))))
    per_part = math.ceil(size / parts)
    units = []
    for a in range(0, len(order), size):
        chosen = order[a : a + size]
        unit = _Unit(chosen, [items[i][0] for i in chosen])
        # the last stack may be short: its idle places are never run (a smaller module)
        for b in range(0, len(chosen), per_part):
            unit.tasks.append((-1, b, tuple(unit.genotypes[b : b + per_part])))
        units.append(unit)
    with SlotRing(slots, stack.nbytes) as ring:
        times.pinned = ring.pin() if torch.device(job.ctx.device).type == "cuda" else False
        scorer = _Scorer(job, ring, times)
        scorer.stack = stack
        scorer.stack_metrics = [m for m in job.metrics if metric_label(m) in stacked]
        build = BuildJob(job.space, job.build, job.seed, ring.spec, stack=size)
        _drive(pool, build, ring, units, scorer.stacked, finished, times, scorer.settle)


def _network_phase(
    pool: Any,
    job: Any,
    items: Sequence[tuple[Genotype, tuple[str, ...]]],
    chosen: list[int],
    stacked: frozenset[str],
    times: StageTimes,
    finished: Callable[[_Unit, list[dict[str, MetricScore]]], None],
) -> None:
    workers = max(1, int(getattr(pool, "workers", 1)))
    units = []
    for i in chosen:
        unit = _Unit([i], [items[i][0]])
        unit.tasks.append((-1, 0, (items[i][0],)))
        units.append(unit)
    with SlotRing(workers + EXTRA_SLOTS, _slot_bytes(job, [items[i][0] for i in chosen])) as ring:
        times.pinned = ring.pin() if torch.device(job.ctx.device).type == "cuda" else False
        scorer = _Scorer(job, ring, times)

        def score(unit: _Unit) -> list[dict[str, MetricScore]]:
            labels = [k for k in items[unit.items[0]][1] if k not in stacked]
            return [scorer.network(unit, labels)]

        build = BuildJob(job.space, job.build, job.seed, ring.spec)
        _drive(pool, build, ring, units, score, finished, times, scorer.settle)


#: Networks tried for the size of a slot before settling for the smallest slot: a network
#: that cannot be built is scored as unbuilt later, not here.
SIZING_TRIES = 8


def _slot_bytes(job: Any, genotypes: Sequence[Genotype]) -> int:
    """A slot for one network: a stack of one where the space offers stacks (it holds
    every op's weights, so any network fits), else room for four of the first network that
    builds (a bigger one is packed apart, slower but exact)."""
    packed = 0
    factory = thread_factory(job.space, job.build)
    for g in genotypes[:SIZING_TRIES]:
        try:
            packed = packing_of(factory.build(g, job.seed)).nbytes
        except Exception:  # noqa: BLE001 - flagged when its turn comes
            continue
        break
    if STACK in getattr(job.space, "capabilities", frozenset()):
        try:
            return max(packed, network_stack(job.space, job.build, 1).nbytes) + (1 << 16)
        except (TypeError, ValueError):
            pass
    return max(4 * packed, 1 << 24)


def _drive(
    pool: Any,
    build: BuildJob,
    ring: SlotRing,
    units: list[_Unit],
    score: Callable[[_Unit], list[dict[str, MetricScore]]],
    finished: Callable[[_Unit, list[dict[str, MetricScore]]], None],
    times: StageTimes,
    settle: Callable[[], None],
) -> None:
    """Units through the slots: build tasks submitted while a slot is free, each unit scored
    once all its tasks are in, its slot free again once its copy is done (``settle``)."""
    queue = deque(units)
    free = deque(range(ring.spec.count))
    pending: dict[cf.Future[Built], _Unit] = {}
    ready: deque[_Unit] = deque()
    try:
        while queue or pending or ready:
            while free and queue:
                unit = queue.popleft()
                unit.slot = free.popleft()
                unit.remaining = len(unit.tasks)
                for _, first, genotypes in unit.tasks:
                    pending[pool.submit(build_into_slot, build, (unit.slot, first, genotypes))] = unit
            if pending:
                start = time.perf_counter()
                done, _ = cf.wait(pending, timeout=None if not ready else 0, return_when=cf.FIRST_COMPLETED)
                times.wait += time.perf_counter() - start
                for future in done:
                    unit = pending.pop(future)
                    built = future.result()
                    times.build += built.build_seconds
                    times.pack += built.pack_seconds
                    unit.built.append(built)
                    unit.remaining -= 1
                    if unit.remaining == 0:
                        ready.append(unit)
            if ready:
                unit = ready.popleft()
                rows = score(unit)
                settle()
                free.append(unit.slot)
                finished(unit, rows)
    finally:
        for future in pending:
            future.cancel()
        for future in pending:  # a slot is not removed under a builder still writing it
            if not future.cancelled():
                with contextlib.suppress(Exception):  # the error that stopped the sweep is raised
                    future.result()


__all__ = [
    "STACK_DATA_FREE",
    "STACK_WITH_DATA",
    "BuildJob",
    "Built",
    "StageTimes",
    "build_into_slot",
    "network_stack",
    "run_pipeline",
    "stacking_for",
]

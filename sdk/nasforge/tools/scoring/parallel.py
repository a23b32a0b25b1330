"""Where a metric sweep runs: this process, a local process pool, or a registered executor (Ray).

A sweep is thousands of independent (build, score) pairs, each tens of milliseconds to
seconds, so it parallelises by data, not by threads: torch's intra-op threads barely help
a small network (two threads were *slower* than one on the 2-core CPU this was written on),
while one single-threaded worker per core scales. The rules every runner follows:

* genotypes travel in **chunks** (``per_task`` genotypes per task), never one task per
  genotype: a task costs a pickle round trip (and, on Ray, scheduling), which per cell
  would eat the speed-up;
* each task carries a *job* (what every genotype of the sweep shares: the space, the metric
  instances, the fixed batch tensors, the context) and a chunk; the worker calls a
  module-level ``fn(job, chunk) -> list`` with one result per item. The job holds the
  parent's own batch tensors, so a worker scores on bit-identical data, and the networks
  are built from the sweep's seed by the same code, so scores do not depend on the runner.
  Given an empty chunk, ``fn`` only prepares what its chunks share (a network factory), so
  a pool forked after that call inherits it instead of each worker making its own;
* a worker is started once (forked where safe, else spawned, so importing torch and
  unpickling the plugin classes happen once per worker, not per chunk), runs torch with
  one thread, and dies with its parent;
* chunks shrink towards the end of a sweep (:func:`guided`), so the workers finish
  together;
* results come back in input order whatever order the chunks finish in; ``progress`` is
  told as chunks finish, so a bar moves while the sweep runs.

The cache stays in the parent: workers return scores and only the parent writes them
(see :mod:`nasforge.tools.scoring.cache`), which keeps one writer per sweep.

This process and the local pool are the core's own runners (:class:`InProcessSweep`,
:class:`ProcessSweep`). Anything else is a registered :class:`~nasforge.run.executors.Executor`
(the Ray plugin's, for a cluster, or a third party's) driven through
:class:`ExecutorSweep`: each chunk is one submission of a small evaluator, so the core
never imports or names a plugin, and a new executor plugin runs sweeps with no change here.
"""

from __future__ import annotations

import abc
import concurrent.futures as cf
import gc
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, TypeVar

from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.option_types import first_line
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Objective, Result
from nasforge.run.executors import Executor, ExecutorOptions, build_executor, die_with_parent

T = TypeVar("T")
#: ``fn(job, chunk) -> results``: one result per item of the chunk, in order. Must be a
#: module-level function (it is pickled by reference).
ChunkFn = Callable[[Any, list[Any]], list[Any]]


#: Chunks per worker a sweep is cut into by default: enough for the fast workers to take
#: over the slow cells' share at the end (cells differ tenfold in cost), few enough that
#: the per-task cost stays far below the work of a chunk.
CHUNKS_PER_WORKER = 8
#: The largest default chunk: a bar that moves, and little lost work on an interrupt.
MAX_PER_TASK = 32


class SweepExecutor(abc.ABC):
    """Runs ``fn(job, chunk)`` over chunks; :meth:`run` yields ``(index, results)`` as
    chunks finish. Use :func:`map_chunks` rather than calling it directly."""

    name: str  # a class's own, or an instance's (an executor's sweep takes its executor's)
    workers: int = 1

    @abc.abstractmethod
    def run(self, fn: ChunkFn, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        """Every chunk's results, each tagged with its chunk's index, in finishing order."""

    def default_per_task(self, n: int) -> int:
        """How many items a task carries when the caller does not say."""
        if self.workers <= 1:
            return 1
        return max(1, min(MAX_PER_TASK, math.ceil(n / (self.workers * CHUNKS_PER_WORKER))))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the workers (may be called again)."""

    def __enter__(self) -> SweepExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcessSweep(SweepExecutor):
    """Chunks one after another in this process: the reference every runner must match.

    It scores with torch on ``threads`` threads (default 1, as every worker does), and puts
    this process's setting back after: a reduction split over two threads rounds
    differently from one over one (SNIP, GraSP and jacob_cov differed in their last digits
    on NB201), so only one thread count everywhere gives identical scores whatever runs
    them. ``threads=None`` keeps this process's setting (faster for one large network,
    not comparable bit for bit with a pool's scores).
    """

    name = "inprocess"

    def __init__(self, workers: int = 1, threads: int | None = 1) -> None:
        self.workers = 1
        self.threads = threads

    def run(self, fn: ChunkFn, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        import torch

        before = torch.get_num_threads()
        if self.threads is not None and before != self.threads:
            torch.set_num_threads(self.threads)
        try:
            for i, chunk in enumerate(chunks):
                yield i, fn(job, chunk)
        finally:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)


def _start_sweep_worker(parent_pid: int) -> None:
    """Pool initializer: die with the sweep, and one torch thread (one worker per core)."""
    die_with_parent(parent_pid)
    import torch

    torch.set_num_threads(1)


def _threads() -> int | None:
    """This process's OS threads (Linux), None where the platform does not say."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


#: Threads this process had when nasforge's scoring was imported, torch and numpy with it:
#: the idle pools importing them starts (OpenBLAS's), which survive a fork by design.
_THREADS_AT_IMPORT = _threads()


def fork_is_safe() -> bool:
    """Whether this process may be forked: no thread has started since torch and numpy were
    imported (so no OpenMP pool has run a parallel region, and no helper thread can hold a
    lock the child would inherit) and there is no CUDA context. A command line that has
    only imported modules and read its input qualifies; a process that has trained or
    scored on several threads, or runs other pools, does not."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    now = _threads()
    torch = sys.modules.get("torch")
    cuda = torch is not None and torch.cuda.is_initialized()
    return now is not None and _THREADS_AT_IMPORT is not None and now <= _THREADS_AT_IMPORT and not cuda


def _ready() -> None:
    """A worker's first task: nothing, so that the pool starts its workers at once."""


class ProcessSweep(SweepExecutor):
    """``workers`` processes on this machine, started at once (their start-up overlaps
    the caller's own work before the sweep).

    Forked from this process where :func:`fork_is_safe` (they then start in milliseconds,
    with torch and the plugins already imported: on 2 cores, ~4 s of start-up CPU per
    worker was the difference between the CLI's 1.45x and the 1.9x of a warm pool), else
    spawned (a fork of a process whose OpenMP pool runs can hang; see
    :class:`nasforge.run.executors.ProcessPoolExecutor`). Either way the same code scores
    the same batch: identical scores. The pool lives until :meth:`close`, so several
    sweeps (a growing HNAS pool) pay the start-up once. ``prepare`` runs in this process
    before a fork, for what every worker would otherwise make for itself while the sweep
    waits (a sweep's network factory: ~0.3 s of torch's meta-device start-up in each).
    """

    name = "process"

    def __init__(
        self, workers: int = 2, start_method: str | None = None, prepare: Callable[[], object] | None = None
    ) -> None:
        self.workers = _check_workers(workers)
        self.start_method = start_method or ("fork" if fork_is_safe() else "spawn")
        forking = self.start_method == "fork"
        if prepare is not None and forking:
            prepare()  # once here, inherited by every worker (spawned ones would not see it)
        self._pool = cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context(self.start_method),
            initializer=_start_sweep_worker,
            initargs=(os.getpid(),),
        )
        if forking:  # the parent's objects out of the children's garbage collections:
            gc.freeze()  # a collection writes to every object it scans, copying its page
        try:
            for _ in range(self.workers):  # a submission starts a worker (a fork context: all of them)
                self._pool.submit(_ready)
        finally:
            if forking:
                gc.unfreeze()

    def run(self, fn: ChunkFn, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        futures = {self._pool.submit(fn, job, chunk): i for i, chunk in enumerate(chunks)}
        try:
            for future in cf.as_completed(futures):
                try:
                    result = future.result()
                except cf.process.BrokenProcessPool as exc:
                    raise NasforgeError(f"a sweep worker process died ({first_line(exc)})") from exc
                yield futures[future], result
        finally:
            for future in futures:  # an error or an interrupt: drop what has not started
                future.cancel()

    def submit(self, fn: Callable[..., T], *args: Any) -> cf.Future[T]:
        """``fn(*args)`` on one of the workers: a device sweep's builders run this way
        (:mod:`nasforge.tools.scoring.pipeline`), while this process scores."""
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class _ChunkEvaluator(Evaluator):
    """One sweep chunk dressed as an evaluation, so any registered executor can run it.

    The "genotype" it is handed is a chunk; its :class:`~nasforge.kernel.result.Result` carries
    the chunk's results in ``metadata["sweep"]``. It sets torch to one thread in the worker
    first (a cluster worker runs one task per CPU).
    """

    name: ClassVar[str] = "sweep-chunk"

    def __init__(self, fn: ChunkFn, job: Any, threads: int | None = 1) -> None:
        # Evaluator.__init__ is for evaluators of a space's genotypes; this one is not
        self.fn, self.job, self.threads = fn, job, threads

    @property
    def objective(self) -> Objective:
        return Objective("sweep")

    def evaluate(self, g: Any) -> Result:
        if self.threads is not None:
            import torch

            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)
        return Result(objectives={}, metadata={"sweep": self.fn(self.job, list(g))})


class ExecutorSweep(SweepExecutor):
    """A sweep on any registered :class:`~nasforge.run.executors.Executor` (a Ray cluster, or
    a third party's), each chunk one submission; the executor is the caller's to close
    unless ``owned``.

    Chunks stream back through the executor's ``submit``/``next_done`` where it has them
    (as they finish: the bar moves, and no worker waits for a slow chunk of another
    batch); an executor with only ``map`` gets all chunks as one batch.
    """

    name = "executor"

    def __init__(self, executor: Executor, *, owned: bool = False) -> None:
        self.executor = executor
        self.name = getattr(executor, "name", "executor")
        self.workers = max(1, int(getattr(executor, "workers", 1) or 1))
        self._owned = owned

    def run(self, fn: ChunkFn, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        evaluator = _ChunkEvaluator(fn, job)
        if not hasattr(self.executor, "next_done"):
            for i, result in enumerate(self.executor.map(evaluator, chunks)):  # type: ignore[arg-type]
                yield i, _unpacked(result)
            return
        tickets = {self.executor.submit(evaluator, chunk): i for i, chunk in enumerate(chunks)}  # type: ignore[arg-type]
        while tickets:
            done = self.executor.next_done()
            index = tickets.pop(done.ticket, None)
            if index is not None:
                yield index, _unpacked(done.result)

    def close(self) -> None:
        if self._owned:
            self.executor.close()
        self._owned = False


def _unpacked(result: Result) -> list[Any]:
    if result.failed or "sweep" not in result.metadata:
        raise NasforgeError(f"a sweep task failed: {result.error or 'no results came back'}")
    return list(result.metadata["sweep"])


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _check_workers(workers: int) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise OptionError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def make_sweep_executor(
    executor: str = "inprocess",
    *,
    workers: int | None = None,
    address: str | None = None,
    options: dict[str, Any] | None = None,
    registry: Registry | None = None,
    prepare: Callable[[], object] | None = None,
) -> SweepExecutor:
    """A runner by name: ``inprocess``, ``process`` (``workers`` local processes), or any
    executor registered through the ``nasforge_register_executors`` hook (found in
    ``registry``, the process-wide one if None), e.g. the Ray plugin's, made with
    ``workers`` and its own ``options`` (``address``: the cluster it should join).
    ``workers`` defaults to the CPUs this process may use (:func:`available_cpus`).
    ``prepare``: what forked local workers should inherit (see :class:`ProcessSweep`).

    Raises a one-line :class:`~nasforge.kernel.errors.NasforgeError` for an unknown name (with a
    suggestion), ``workers`` < 1, or an option given to a runner of this machine (it
    would be silently ignored).
    """
    if workers is not None:
        _check_workers(workers)
    options = {**({"address": address} if address is not None else {}), **(options or {})}
    if executor in (InProcessSweep.name, ProcessSweep.name):
        if options:
            raise OptionError(
                f"the {executor} executor runs on this machine: executor option "
                f"'{next(iter(options))}' needs another (a registered executor that takes it)"
            )
        if executor == InProcessSweep.name:
            if workers not in (None, 1):
                raise OptionError(
                    f"the inprocess executor runs one worker, got workers={workers}; use the process executor"
                )
            return InProcessSweep()
        return ProcessSweep(workers if workers is not None else available_cpus(), prepare=prepare)
    registry = registry if registry is not None else get_registry()
    cls = registry.get("executor", executor)
    count = workers if workers is not None else available_cpus()
    return ExecutorSweep(build_executor(cls, count, ExecutorOptions(options=options), registry), owned=True)


class _OnFirstUse(SweepExecutor):
    """A runner made on its first chunk: a pool whose scores are all cached starts no
    worker process (seconds of start-up saved where the sweep itself takes none)."""

    def __init__(self, parallelism: Parallelism, registry: Registry | None) -> None:
        self.parallelism, self.registry = parallelism, registry
        self.name = parallelism.executor
        self.workers = 1 if parallelism.executor == InProcessSweep.name else parallelism.workers
        self._runner: SweepExecutor | None = None

    def run(self, fn: ChunkFn, job: Any, chunks: Sequence[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
        if self._runner is None:
            p = self.parallelism
            self._runner = make_sweep_executor(
                p.executor,
                workers=p.workers,
                options=p.options,
                registry=self.registry,
                prepare=lambda: fn(job, []),  # a chunk function prepares its shared state on []
            )
        return self._runner.run(fn, job, chunks)

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def sweep_for(parallelism: Parallelism | None, registry: Registry | None = None) -> SweepExecutor:
    """The sweep runner of a run's :class:`~nasforge.kernel.parallelism.Parallelism` (this
    process when None), started on its first chunk; the caller closes it. A strategy that
    scores a pool uses it, so ``--executor process --workers 2`` scores on two cores."""
    if parallelism is None or parallelism.executor == InProcessSweep.name:
        return InProcessSweep()
    return _OnFirstUse(parallelism, registry)


def guided(items: Sequence[T], per_task: int, workers: int) -> list[list[T]]:
    """``items`` in consecutive chunks of ``per_task``, smaller towards the end (never more
    than the remaining items over ``CHUNKS_PER_WORKER // 2`` per worker), so the workers
    finish together: with equal chunks the last one ran alone for up to a chunk's time
    (a 32-cell chunk of synflow on NB201: 0.6 s, on a 16 s sweep)."""
    if workers <= 1:
        return chunked(items, per_task)
    out, start, spread = [], 0, workers * max(1, CHUNKS_PER_WORKER // 2)
    while start < len(items):
        size = max(1, min(per_task, math.ceil((len(items) - start) / spread)))
        out.append(list(items[start : start + size]))
        start += size
    return out


def chunked(items: Sequence[T], per_task: int) -> list[list[T]]:
    """``items`` cut into consecutive lists of ``per_task`` (the last may be shorter)."""
    if per_task < 1:
        raise OptionError(f"per_task must be >= 1, got {per_task}")
    return [list(items[i : i + per_task]) for i in range(0, len(items), per_task)]


def map_chunks(
    executor: SweepExecutor,
    fn: ChunkFn,
    job: Any,
    items: Sequence[Any],
    *,
    per_task: int | None = None,
    on_chunk: Callable[[list[Any], list[Any]], None] | None = None,
) -> list[Any]:
    """``fn(job, chunk)`` over ``items`` in chunks on ``executor``; results in input order.

    ``on_chunk(chunk, results)`` is called in the parent as each chunk finishes (in
    finishing order): the place to cache results and move a progress bar. An exception
    in a task is raised here, and the chunks not yet started are dropped.
    """
    if not items:
        return []
    if not per_task:  # None (or 0, as before): the default, shrinking towards the end
        chunks = guided(items, executor.default_per_task(len(items)), executor.workers)
    else:
        chunks = chunked(items, per_task)
    out: list[list[Any] | None] = [None] * len(chunks)
    for index, results in executor.run(fn, job, chunks):
        if len(results) != len(chunks[index]):
            raise RuntimeError(f"a sweep task returned {len(results)} results for {len(chunks[index])} items")
        out[index] = results
        if on_chunk is not None:
            on_chunk(chunks[index], results)
    return [r for part in out for r in part or ()]


__all__ = [
    "CHUNKS_PER_WORKER",
    "MAX_PER_TASK",
    "InProcessSweep",
    "ProcessSweep",
    "ExecutorSweep",
    "SweepExecutor",
    "available_cpus",
    "chunked",
    "fork_is_safe",
    "guided",
    "make_sweep_executor",
    "map_chunks",
    "sweep_for",
]

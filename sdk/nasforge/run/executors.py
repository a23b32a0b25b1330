"""The core's executors, and the options that say where a run's trials go.

:class:`InProcessExecutor` (the default) evaluates in this process; a process pool runs
trials in parallel on this machine; an executor plugin (Ray) runs them on a cluster. The
Executor interface is :mod:`nasforge.kernel.executor_contract`.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import attrs

from nasforge.kernel.context_fields import keyword_parameters
from nasforge.kernel.converters import to_dict
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.executor_contract import (
    DEFAULT_RETRIES,
    RETRIES_KEY,
    Done,
    Executor,
    collect_in_order,
    evaluate_safely,
    new_ticket,
    with_retries,
    worker_died,
)
from nasforge.kernel.fidelity import Proposal
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import check_options
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.result import Result
from nasforge.kernel.run_context import RunContext
from nasforge.run.construction import build_component
from nasforge.run.threads import worker_threads


@attrs.frozen
class ExecutorOptions:
    """Where and with what an executor runs trials, apart from the spec.

    Why apart: none of it changes what a trial computes, so a run journaled on a laptop
    resumes on a cluster (or the other way round) and compares equal. ``retries`` is how
    often a trial whose worker died is run again; ``options`` are the executor's own
    keyword options (``--executor-option KEY=VALUE``, or a flag the executor declares).
    """

    retries: int = attrs.field(default=DEFAULT_RETRIES)
    options: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)

    @retries.validator
    def _retries(self, _attr: attrs.Attribute, value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise NasforgeError(f"retries must be a whole number >= 0, got {value!r}")

    def kwargs(self) -> dict[str, Any]:
        """Constructor keywords: ``retries`` only where it differs from the default, so an
        executor written before it existed (one that takes only ``workers``) is still built."""
        out: dict[str, Any] = {"retries": self.retries} if self.retries != DEFAULT_RETRIES else {}
        return {**out, **self.options}


def build_executor(
    cls: type[Executor], workers: int, options: ExecutorOptions | None = None, registry: Any = None
) -> Executor:
    """``cls`` built for ``workers`` trials in flight with ``options``; an option it does not
    take is refused in one line (naming the executor that does, where one is registered)
    rather than silently ignored."""
    options = options or ExecutorOptions()
    check_executor_options(cls, options, registry)
    name = getattr(cls, "name", cls.__name__)
    context = RunContext(registry=registry, parallelism=Parallelism(name, workers, options.options))
    return build_component("executor", cls, context, options.kwargs())


def check_executor_options(cls: type[Executor], options: ExecutorOptions, registry: Any = None) -> None:
    """Refuse, before anything is built (the CLI calls it first thing), an option ``cls``
    does not take; its own options are then checked against its declared types."""
    name = getattr(cls, "name", cls.__name__)
    accepted = _keywords(cls)
    for option in options.options:
        if accepted is not None and option not in accepted:
            raise OptionError(_not_taken(option, name, accepted, registry))
    check_options(f"executor '{name}'", cls, dict(options.options))


def executor_options(cls: type[Executor]) -> list[str]:
    """The options an executor takes besides ``workers``, in its signature's order."""
    taken = keyword_parameters(cls)
    return [name for name in (taken[0] if taken else []) if name != "workers"]


def _keywords(cls: type[Executor]) -> set[str] | None:
    """The keyword options ``cls`` takes (None: any, through ``**options``)."""
    taken = keyword_parameters(cls)
    if taken is None or taken[1]:
        return None
    return set(taken[0]) - {"workers"}


def _not_taken(option: str, name: str, accepted: set[str], registry: Any) -> str:
    for flag, owner in flag_owners(registry).items():
        if owner[1] == option and owner[0] != name:
            return f"{flag} applies to --executor {owner[0]}, not to '{name}'"
    takes = ", ".join(sorted(accepted)) or "none"
    return f"executor '{name}' has no option '{option}' (its options: {takes})"


def flag_owners(registry: Any) -> dict[str, tuple[str, str]]:
    """Every executor flag the registry's executors declare: flag -> (executor, option)."""
    if registry is None:
        return {}
    return {
        flag: (executor, option)
        for executor, cls in registry.items("executor")
        for flag, option in getattr(cls, "flags", {}).items()
    }


class InProcessExecutor(Executor):
    """The default: one evaluation at a time in this process.

    ``workers`` only sets how many genotypes are asked per batch (or kept in flight by an
    asynchronous run), so an in-process run with ``workers=N`` reproduces exactly what a
    pool or Ray run with N workers does. A worker that dies here is the search itself, so
    there is nothing to retry (``retries`` is accepted and unused).
    """

    name = "inprocess"

    def __init__(self, workers: int = 1, retries: int = DEFAULT_RETRIES) -> None:
        self.workers = workers

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        return [evaluate_safely(evaluator, g) for g in genotypes]


#: Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int | None) -> None:
    """Pool worker initializer: end this worker when the process that started it dies.

    Why: a search killed with SIGKILL cannot shut its pool down, and its workers would go
    on evaluating for nobody (holding memory, a GPU, and files the next resume needs).
    On Linux the kernel sends SIGKILL when the worker's parent dies (``PR_SET_PDEATHSIG``;
    under ``forkserver`` the parent is the server, which itself ends with the search);
    elsewhere a daemon thread watches the parent pid. ``parent_pid`` (the search, when it
    is the worker's direct parent) catches a search that died before this ran.
    """
    parent = os.getppid()
    if parent_pid is not None and parent != parent_pid:
        os._exit(1)  # orphaned already
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
        if armed:
            if os.getppid() != parent:  # the parent died between the two reads
                os._exit(1)
            return
    threading.Thread(target=_watch_parent, args=(parent,), name="nasforge-parent-watch", daemon=True).start()


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _start_worker(parent_pid: int, threads: int) -> None:
    """Spawned worker initializer: die with the search, and use its torch thread count."""
    die_with_parent(parent_pid)
    import torch

    torch.set_num_threads(threads)


def _watch_parent(parent_pid: int, interval: float = 1.0) -> None:
    while os.getppid() == parent_pid:
        time.sleep(interval)
    os._exit(1)


@attrs.define
class _Job:
    """A submission of a parallel executor, until it is handed back."""

    evaluator: Evaluator
    genotype: Genotype | Proposal
    started: float
    #: Times it was run again after its worker died (recorded in the result).
    reruns: int = 0
    #: Deaths it alone can be blamed for (counted against the executor's ``retries``).
    deaths: int = 0


class ProcessPoolExecutor(Executor):
    """A local process pool for evaluators that train (the evaluator must pickle).

    Workers are *spawned*, not forked: a fork of a process whose torch (OpenMP) thread
    pool is already running inherits locked mutexes without the threads that hold them,
    and the first parallel op in the child (``torch.randperm`` of a training loop) blocks
    for ever. Each worker runs torch with ``threads`` threads (default: the parent's divided
    among the workers, :func:`~nasforge.run.threads.worker_threads`), and
    dies with the process that started it (see :func:`die_with_parent`).

    A worker that dies breaks the whole pool (Python's ``BrokenProcessPool``) and takes
    every trial in flight with it, so the pool is rebuilt and those trials are run again
    *one at a time* until each has run alone: only a death while a trial ran alone is
    blamed on it and counted against ``retries``, so a trial that kills its worker ends
    failed while the ones beside it finish normally.
    """

    name = "process"

    def __init__(self, workers: int = 2, threads: int | None = None, retries: int = DEFAULT_RETRIES) -> None:
        self.workers = workers
        self.retries = retries
        self._threads = threads if threads is not None else worker_threads(workers, _torch_threads())
        self._pool = self._new_pool()
        self._jobs: dict[int, _Job] = {}
        self._futures: dict[cf.Future[Result], int] = {}
        #: Submitted, not yet started (held while suspects run alone).
        self._waiting: collections.deque[int] = collections.deque()
        #: Trials that were in flight when the pool died beside others: each runs alone next.
        self._suspects: collections.deque[int] = collections.deque()
        #: The suspect now running alone (nothing else starts beside it), if any.
        self._alone: int | None = None
        self._ready: collections.deque[Done] = collections.deque()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(os.getpid(), self._threads),
        )

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        return collect_in_order(self, evaluator, genotypes)

    def submit(self, evaluator: Evaluator, g: Genotype | Proposal) -> int:
        ticket = new_ticket()
        self._jobs[ticket] = _Job(evaluator, g, time.perf_counter())
        self._waiting.append(ticket)
        self._pump()
        return ticket

    def next_done(self) -> Done:
        while not self._ready:
            if not self._futures:
                self._pump()
                if not self._futures:
                    raise LookupError("no evaluation in flight")
            finished, _ = cf.wait(self._futures, return_when=cf.FIRST_COMPLETED)
            self._collect(finished)
        return self._ready.popleft()

    def _pump(self) -> None:
        """Start what may start: a suspect alone on an idle pool, else what is waiting, up
        to one trial per worker."""
        if self._alone is not None:
            return
        if self._suspects:
            if not self._futures:
                self._alone = self._suspects.popleft()
                self._start(self._alone)
            return
        while self._waiting and len(self._futures) < self.workers:  # queued in the pool, a
            self._start(self._waiting.popleft())  # trial would die with a worker it never ran on

    def _start(self, ticket: int) -> None:
        job = self._jobs[ticket]
        try:
            future = self._pool.submit(evaluate_safely, job.evaluator, job.genotype)
        except BrokenProcessPool:  # it broke since the last collection: start afresh
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            future = self._pool.submit(evaluate_safely, job.evaluator, job.genotype)
        self._futures[future] = ticket

    def _collect(self, finished: set[cf.Future[Result]]) -> None:
        broken: list[int] = []
        for future in sorted(finished, key=self._futures.__getitem__):
            ticket = self._futures.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool:
                broken.append(ticket)
                continue
            self._finish(ticket, result)
        if broken:
            self._recover(broken)
        self._pump()

    def _recover(self, broken: list[int]) -> None:
        """The pool died: every trial still in it died with it. Rebuild, then rerun them."""
        if self._futures:  # the rest of the pool's futures fail too; keep any that finished
            rest, _ = cf.wait(self._futures)
            for future in sorted(rest, key=self._futures.__getitem__):
                ticket = self._futures.pop(future)
                try:
                    self._finish(ticket, future.result())
                except BrokenProcessPool:
                    broken.append(ticket)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._new_pool()
        alone = len(broken) == 1
        self._alone = None
        for ticket in sorted(broken):
            job = self._jobs[ticket]
            if alone:
                job.deaths += 1
            if job.deaths > self.retries:
                self._finish(ticket, worker_died("BrokenProcessPool", job.reruns + 1))
                continue
            job.reruns += 1
            self._suspects.append(ticket)

    def _finish(self, ticket: int, result: Result) -> None:
        job = self._jobs.pop(ticket)
        if ticket == self._alone:
            self._alone = None
        self._ready.append(Done(ticket, with_retries(result, job.reruns), time.perf_counter() - job.started))

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


__all__ = [
    "DEFAULT_RETRIES",
    "RETRIES_KEY",
    "Done",
    "Executor",
    "ExecutorOptions",
    "InProcessExecutor",
    "ProcessPoolExecutor",
    "build_executor",
    "check_executor_options",
    "collect_in_order",
    "die_with_parent",
    "evaluate_safely",
    "executor_options",
    "flag_owners",
    "new_ticket",
    "with_retries",
    "worker_died",
]

"""Where evaluations run. Strategies never see this.

Two ways to use an executor:

- ``map``: a batch in, results back in input order. The experiment's default (synchronous)
  loop uses it, which keeps a run identical whatever executor runs it.
- ``submit`` / ``next_done``: evaluations started one by one and collected as they
  finish, so the experiment's asynchronous loop keeps ``workers`` trials in flight and
  never waits for a batch's slowest trial. Every executor supports it: this base class
  implements it on top of ``map`` (one evaluation at a time, in submission order), and
  the pool and Ray executors run the submissions in parallel.

A worker that dies mid-evaluation (killed, out of memory, a crashed node) does not end
the search: the pool and Ray executors run its trial again, up to ``retries`` times,
and record how often in the result's ``metadata["retries"]``; a trial that still kills
its worker becomes a failed result.
"""

from __future__ import annotations

import abc
import collections
import concurrent.futures as cf
import ctypes
import itertools
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any, ClassVar

import attrs

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Proposal
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result

#: How many times a trial whose worker died is run again before it counts as failed.
DEFAULT_RETRIES = 2
#: Result metadata key: how many times the trial was run again after its worker died.
RETRIES_KEY = "retries"


def evaluate_safely(evaluator: Evaluator, g: Genotype | Proposal) -> Result:
    """Evaluate, turning an exception into a failed result instead of a dead search.

    A :class:`~nasforge.kernel.fidelity.Proposal` is evaluated at its fidelity, so every
    executor serves multi-fidelity strategies by passing what it was given here.
    """
    try:
        if isinstance(g, Proposal):
            if g.stop_below is None:
                return evaluator.evaluate_at(g.genotype, g.fidelity)
            return evaluator.evaluate_at(g.genotype, g.fidelity, stop_below=g.stop_below)
        return evaluator.evaluate(g)
    except Exception as exc:  # one bad architecture must not end the search
        return Result(objectives={}, failed=True, error=f"{type(exc).__name__}: {exc}")


@attrs.frozen
class Done:
    """One finished submission (:meth:`Executor.next_done`)."""

    #: What :meth:`Executor.submit` returned for it.
    ticket: int
    result: Result
    #: Wall seconds it took: from its submission until it finished, retries included
    #: (evaluated one at a time in this process: its evaluation alone).
    wall_seconds: float


@attrs.frozen
class ExecutorOptions:
    """Where and with what an executor runs trials, apart from the spec.

    Why apart: none of it changes what a trial computes, so a run journaled on a laptop
    resumes on a cluster (or the other way round) and compares equal. ``address`` joins
    an existing Ray cluster; ``trial_cpus``/``trial_gpus`` are each trial's Ray task
    resources; ``retries`` is how often a trial whose worker died is run again.
    """

    address: str | None = None
    trial_cpus: float = attrs.field(default=1.0, converter=float)
    trial_gpus: float = attrs.field(default=0.0, converter=float)
    retries: int = attrs.field(default=DEFAULT_RETRIES)

    @trial_cpus.validator
    def _cpus(self, _attr: attrs.Attribute, value: float) -> None:
        if not value > 0:
            raise NasforgeError(f"trial CPUs must be > 0, got {value:g}")

    @trial_gpus.validator
    def _gpus(self, _attr: attrs.Attribute, value: float) -> None:
        if not value >= 0:
            raise NasforgeError(f"trial GPUs must be >= 0, got {value:g}")

    @retries.validator
    def _retries(self, _attr: attrs.Attribute, value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise NasforgeError(f"retries must be a whole number >= 0, got {value!r}")

    def on_cluster(self) -> bool:
        """Whether anything here only a cluster executor (Ray) can honour is set."""
        return self.address is not None or self.trial_cpus != 1.0 or self.trial_gpus != 0.0

    def kwargs(self) -> dict[str, Any]:
        """Constructor keywords: the cluster ones only where set, so an executor written
        before they existed (one that takes only ``workers``) is still built."""
        out: dict[str, Any] = {"retries": self.retries} if self.retries != DEFAULT_RETRIES else {}
        if self.address is not None:
            out["address"] = self.address
        if self.trial_cpus != 1.0:
            out["trial_cpus"] = self.trial_cpus
        if self.trial_gpus != 0.0:
            out["trial_gpus"] = self.trial_gpus
        return out


def build_executor(cls: type[Executor], workers: int, options: ExecutorOptions | None = None) -> Executor:
    """``cls`` built for ``workers`` trials in flight with ``options``; cluster options
    (an address, trial resources) are refused, in one line, for an executor that cannot
    honour them rather than silently ignored."""
    options = options or ExecutorOptions()
    check_executor_options(cls, options)
    return cls(workers=workers, **options.kwargs())


def check_executor_options(cls: type[Executor], options: ExecutorOptions) -> None:
    """Refuse cluster options (an address, trial resources) for an executor that cannot
    honour them, before anything is built (the CLI calls it first thing)."""
    if options.on_cluster() and not getattr(cls, "cluster", False):
        what = "--ray-address" if options.address is not None else "--trial-cpus/--trial-gpus"
        raise NasforgeError(
            f"{what} applies to an executor that runs on a cluster (--executor ray), "
            f"not to '{getattr(cls, 'name', cls.__name__)}'"
        )


def with_retries(result: Result, retries: int) -> Result:
    """``result`` with ``metadata["retries"]`` set (unchanged when nothing was retried, so
    a run without a dead worker journals exactly what it always did)."""
    if retries == 0:
        return result
    return attrs.evolve(result, metadata={**result.metadata, RETRIES_KEY: retries})


def worker_died(error: str, runs: int) -> Result:
    """The failed result of a trial that killed its worker on every one of its ``runs``."""
    return with_retries(
        Result(objectives={}, failed=True, error=f"the worker died on each of {runs} runs ({error})"),
        runs - 1,
    )


class Executor(abc.ABC):
    """Evaluates genotypes: a batch with ``map``, or one by one with ``submit``."""

    name: ClassVar[str]
    #: Whether it runs on a cluster and so takes ``address``/``trial_cpus``/``trial_gpus``.
    cluster: ClassVar[bool] = False
    workers: int = 1

    @abc.abstractmethod
    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        """Evaluate every genotype (a Proposal at its fidelity: pass it to ``evaluate_safely``)."""

    def submit(self, evaluator: Evaluator, g: Genotype | Proposal) -> int:
        """Start evaluating ``g``; returns a ticket that :meth:`next_done` gives back with
        its result. This default queues it, and ``next_done`` evaluates the oldest through
        ``map``: one at a time, in submission order, so any executor runs asynchronous
        searches (the parallel ones override both)."""
        queue = self._serial_queue()
        ticket = next(_tickets)
        queue.append((ticket, evaluator, g))
        return ticket

    def next_done(self) -> Done:
        """Block until one submitted evaluation has finished and return it (each exactly
        once). Raises ``LookupError`` when nothing is in flight."""
        queue = self._serial_queue()
        if not queue:
            raise LookupError("no evaluation in flight")
        ticket, evaluator, g = queue.popleft()
        started = time.perf_counter()  # its own time: nothing here runs beside it
        (result,) = self.map(evaluator, [g])
        return Done(ticket, result, time.perf_counter() - started)

    def _serial_queue(self) -> collections.deque[tuple[int, Evaluator, Genotype | Proposal]]:
        # Created lazily: subclasses written before submit existed never call our __init__.
        queue = self.__dict__.get("_nasforge_serial")
        if queue is None:
            queue = self.__dict__["_nasforge_serial"] = collections.deque()
        return queue

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release workers (a run calls it once, on any exit; may be called again)."""


#: Tickets are unique in the process, so one from another executor is never mistaken.
_tickets = itertools.count()


def new_ticket() -> int:
    """A fresh ticket for :meth:`Executor.submit` (for executors that override it)."""
    return next(_tickets)


class InProcessExecutor(Executor):
    """The default: one evaluation at a time in this process.

    ``workers`` only sets how many genotypes are asked per batch (or kept in flight by an
    asynchronous run), so an in-process run with ``workers=N`` reproduces exactly what a
    pool or Ray run with N workers does. A worker that dies here is the search itself, so
    there is nothing to retry (``retries`` is accepted and unused).
    """

    name = "inprocess"

    def __init__(self, workers: int = 1, **_: Any) -> None:
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


def collect_in_order(
    executor: Executor, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]
) -> list[Result]:
    """``map`` through ``submit``/``next_done``: the parallel executors' batch, so a batch
    gets the same dead-worker retries as an asynchronous run. Results in input order."""
    tickets = [executor.submit(evaluator, g) for g in genotypes]
    done: dict[int, Result] = {}
    while len(done) < len(tickets):
        finished = executor.next_done()
        done[finished.ticket] = finished.result
    return [done[t] for t in tickets]


class ProcessPoolExecutor(Executor):
    """A local process pool for evaluators that train (the evaluator must pickle).

    Workers are *spawned*, not forked: a fork of a process whose torch (OpenMP) thread
    pool is already running inherits locked mutexes without the threads that hold them,
    and the first parallel op in the child (``torch.randperm`` of a training loop) blocks
    for ever. Each worker runs torch with ``threads`` threads (default: the parent's), and
    dies with the process that started it (see :func:`die_with_parent`).

    A worker that dies breaks the whole pool (Python's ``BrokenProcessPool``) and takes
    every trial in flight with it, so the pool is rebuilt and those trials are run again
    *one at a time* until each has run alone: only a death while a trial ran alone is
    blamed on it and counted against ``retries``, so a trial that kills its worker ends
    failed while the ones beside it finish normally.
    """

    name = "process"

    def __init__(
        self, workers: int = 2, threads: int | None = None, retries: int = DEFAULT_RETRIES, **_: Any
    ) -> None:
        self.workers = workers
        self.retries = retries
        self._threads = threads if threads is not None else _torch_threads()
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

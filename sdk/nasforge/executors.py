"""Where evaluations run. Strategies never see this: the experiment hands a batch of
genotypes to an executor and gets results back in the same order, which keeps runs
deterministic whatever runs them."""

from __future__ import annotations

import abc
import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from nasforge.evaluator import Evaluator
from nasforge.fidelity import Proposal
from nasforge.genotype import Genotype
from nasforge.result import Result


def evaluate_safely(evaluator: Evaluator, g: Genotype | Proposal) -> Result:
    """Evaluate, turning an exception into a failed result instead of a dead search.

    A :class:`~nasforge.fidelity.Proposal` is evaluated at its fidelity, so every
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


class Executor(abc.ABC):
    """Evaluates a batch of genotypes; results come back in input order."""

    name: ClassVar[str]
    workers: int = 1

    @abc.abstractmethod
    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        """Evaluate every genotype (a Proposal at its fidelity: pass it to ``evaluate_safely``)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release workers (a run calls it once, on any exit; may be called again)."""


class InProcessExecutor(Executor):
    """The default: one evaluation at a time in this process.

    ``workers`` only sets how many genotypes are asked per batch, so an in-process run
    with ``workers=N`` reproduces exactly what a pool or Ray run with N workers does.
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


class ProcessPoolExecutor(Executor):
    """A local process pool for evaluators that train (the evaluator must pickle).

    Workers are *spawned*, not forked: a fork of a process whose torch (OpenMP) thread
    pool is already running inherits locked mutexes without the threads that hold them,
    and the first parallel op in the child (``torch.randperm`` of a training loop) blocks
    for ever. Each worker runs torch with ``threads`` threads (default: the parent's), and
    dies with the process that started it (see :func:`die_with_parent`).
    """

    name = "process"

    def __init__(self, workers: int = 2, threads: int | None = None, **_: Any) -> None:
        self.workers = workers
        context = multiprocessing.get_context("spawn")
        self._pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), threads if threads is not None else _torch_threads()),
        )

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        return list(self._pool.map(evaluate_safely, [evaluator] * len(genotypes), genotypes))

    def close(self) -> None:
        self._pool.shutdown()

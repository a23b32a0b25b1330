"""The Executor interface: where evaluations run. Strategies never see it.

Two ways to use an executor:

- ``map``: a batch in, results back in input order. A run's default (synchronous) loop
  uses it, which keeps a run identical whatever executor runs it (and its journal too).
- ``submit`` / ``next_done``: evaluations started one by one and collected as they
  finish, so an asynchronous run keeps ``workers`` trials in flight and never waits for a
  batch's slowest trial. Every executor supports it: this base class implements it on top
  of ``map`` (one evaluation at a time, in submission order); parallel executors run the
  submissions side by side.

A worker that dies mid-evaluation (killed, out of memory, a crashed node) must not end
the search: a parallel executor runs its trial again, up to ``retries`` times, records how
often in the result's ``metadata["retries"]`` (:func:`with_retries`), and makes a trial
that still kills its worker a failed result (:func:`worker_died`).

Named for what it holds, the contract: the executors themselves (in-process, a process
pool) and the options that choose one belong to the run, in :mod:`nasforge.run.executors`.
"""

from __future__ import annotations

import abc
import collections
import itertools
import time
from collections.abc import Sequence
from typing import ClassVar

import attrs

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
    """Evaluates genotypes: a batch with ``map``, or one by one with ``submit``.

    A run builds it as ``cls(workers=N, **options)`` (N: its run context's
    ``parallelism.workers``): ``retries`` where it reruns trials whose worker died, and
    its own keyword options (a cluster's address, each trial's resources), which reach it
    from ``--executor-option KEY=VALUE`` and from the flags it declares in :attr:`flags`.
    """

    name: ClassVar[str]
    #: Command-line flags of its own options (``{"--cluster-address": "address"}``): the
    #: CLI takes them as ``--executor-option address=...``, and the Python API the flag's
    #: name as a keyword (``cluster_address=...``); either is refused, naming this
    #: executor, when the run uses another.
    flags: ClassVar[dict[str, str]] = {}
    workers: int = 1
    context_fields: ClassVar[frozenset[str]] = frozenset()

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

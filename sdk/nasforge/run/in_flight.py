"""Asynchronous evaluation: ``workers`` trials kept in flight, each result told as it arrives.

No worker waits for a batch's slowest trial, and a strategy that learns from each result
(regularized evolution, hyperband, BO) learns sooner. Which result arrives first depends
on the machines, so such a run is not reproducible from its seed alone: the journal
records each trial in the order it was told and the number of the ask it answers, and a
resume replays the tells in exactly that order between exactly those asks, so the
strategy stands where it stood. After a stop (rule, budget, strategy finished) no new ask
is made, and the trials in flight are waited for and recorded.

A trial's ``wall_seconds`` is its own time, submission to result; trials in flight
together overlap, so a replayed trial counts 1/``workers`` of it toward the run's wall
clock (the seconds budget).
"""

from __future__ import annotations

import attrs

from nasforge.kernel.errors import JournalError
from nasforge.kernel.fidelity import Ask
from nasforge.kernel.result import Trial
from nasforge.run.loop import RunLoop, as_evaluated
from nasforge.run.replay import check_replayed


@attrs.define
class Flight:
    """An asynchronous run's asks in flight."""

    #: Ask numbers the journal answers (a replay never sends these to the executor).
    answered: frozenset[int]
    #: Asked and not yet told, by ask number.
    asks: dict[int, Ask] = attrs.field(factory=dict)
    #: The executor's ticket of each ask it evaluates -> the ask's number.
    tickets: dict[int, int] = attrs.field(factory=dict)
    next_number: int = 0


def run_in_flight(loop: RunLoop) -> None:
    """Keep ``workers`` trials in flight; tell each result as it arrives, then ask anew.

    Asks are numbered in the order made. A replay tells the journal's results in the
    order the journal holds them and, after each tell, asks (exactly as the run did) until
    ``workers`` are in flight again; an ask the journal does not answer goes to the
    executor at once while the replay goes on, and once the journal is spent results are
    taken as the executor finishes them.
    """
    exp = loop.exp
    flight = Flight(answered=frozenset(n for n in loop.replay.asked if n is not None))
    share = 1.0 / max(1, exp.executor.workers)
    while True:
        if exp.stopped is None:
            _fill(loop, flight)
        if not flight.asks:
            break
        told = len(exp.trials)
        if told < len(loop.recorded):
            number = loop.replay.asked[told]
            assert number is not None
            old = loop.recorded[told]
            asked = _replayed_ask(loop, flight, number, old)
            result, wall = old.result, old.wall_seconds
            loop.state.wall_before += wall * share  # in-flight trials' own times overlap
        else:
            done = exp.executor.next_done()
            number = flight.tickets.pop(done.ticket)
            asked = flight.asks.pop(number)
            result, wall = done.result, done.wall_seconds
        loop.record(asked, result, wall, asked_number=number)


def _fill(loop: RunLoop, flight: Flight) -> None:
    """Ask until ``workers`` trials are in flight (or the budget, the strategy, or an
    ended run's journal allows no more); send the ones the journal lacks to the executor."""
    finished = loop.strategy_finished()  # said once, when it is
    if loop.asker.exhausted or finished:
        return
    in_flight = len(flight.asks)
    if loop.spent(in_flight):
        return
    want = loop.room(loop.exp.executor.workers - in_flight, in_flight)
    if loop.replay.ended:  # re-reading an ended run: exactly the asks it made, all told
        want = min(want, len(loop.recorded) - flight.next_number)
    if want <= 0:
        return
    for asked in loop.asker.ask(want):
        number = flight.next_number
        flight.next_number += 1
        flight.asks[number] = asked
        if number not in flight.answered:
            ticket = loop.exp.executor.submit(loop.exp.evaluator, as_evaluated(asked))
            flight.tickets[ticket] = number


def _replayed_ask(loop: RunLoop, flight: Flight, number: int, old: Trial) -> Ask:
    """The in-flight ask the journal's next trial answers; one the strategy has not
    asked, or asked as something else, means another search: refused."""
    asked = flight.asks.pop(number, None)
    if asked is None:
        raise JournalError(
            f"journal diverges at trial {old.index}: it answers ask {number}, which the strategy "
            "has not made (different seed, workers or code?)"
        )
    check_replayed(loop.exp.space, asked, old, f"trial {old.index} (ask {number})")
    return asked

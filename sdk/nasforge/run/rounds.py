"""Synchronous evaluation, the default: rounds of ``workers`` asks, each round evaluated as
a batch and told in ask order, so a run is the same whatever executor runs it (and its
journal too). Replayed trials come first and in order, so a resumed run stands exactly
where it stood.
"""

from __future__ import annotations

import time

from nasforge.kernel.fidelity import Ask
from nasforge.run.loop import Answer, RunLoop, as_evaluated
from nasforge.run.replay import check_replayed


def run_rounds(loop: RunLoop) -> None:
    """Rounds of: ask (deduplicated), answer from the journal, evaluate the rest, record."""
    exp = loop.exp
    while exp.stopped is None and not _finished(loop):
        asks = loop.asker.ask(loop.room(exp.executor.workers))
        if not asks:
            loop.strategy_finished()  # it may have finished on repeats the run answered: said
            break
        answers = _answer_from_journal(loop, asks)
        _evaluate_fresh(loop, asks, answers)
        for asked, (result, wall) in zip(asks, answers, strict=True):
            assert result is not None
            loop.record(asked, result, wall)


def _finished(loop: RunLoop) -> bool:
    """The strategy is finished, the budget is spent, or an ended run has been re-read
    (never extended: its replayed wall time runs short of what the budget counted)."""
    if loop.strategy_finished():
        return True
    if loop.spent():
        return True
    return loop.replay.ended and len(loop.exp.trials) >= len(loop.recorded)


def _answer_from_journal(loop: RunLoop, asks: list[Ask]) -> list[Answer]:
    """(result, wall seconds) of each ask the journal holds, in order; (None, 0) for the
    rest. An ask other than the recorded one means another search: refused."""
    answers: list[Answer] = []
    for offset, asked in enumerate(asks):
        index = len(loop.exp.trials) + offset
        if index >= len(loop.recorded):
            answers.append((None, 0.0))
            continue
        old = loop.recorded[index]
        check_replayed(loop.exp.space, asked, old, f"trial {index}")
        answers.append((old.result, old.wall_seconds))
        loop.state.wall_before += old.wall_seconds
    return answers


def _evaluate_fresh(loop: RunLoop, asks: list[Ask], answers: list[Answer]) -> None:
    """Fill in the unanswered asks through the executor, each charged an equal share of
    the round's wall time."""
    fresh = [as_evaluated(asked) for asked, (result, _) in zip(asks, answers, strict=True) if result is None]
    if not fresh:
        return
    t0 = time.perf_counter()
    new = iter(loop.exp.executor.map(loop.exp.evaluator, fresh))
    per = (time.perf_counter() - t0) / len(fresh)
    for k, (result, _) in enumerate(answers):
        if result is None:
            answers[k] = (next(new), per)

"""Ask and tell in this process, as a run does: what the strategy kit drives strategies with.

The kit checks the Strategy contract itself, without the run that journals it: a repeat of
a (genotype, fidelity) already told is told its earlier result at once and not counted (the
run's duplicate handling), and a resume is the strategy rebuilt and fed recorded trials
(read back from their JSON, as from a journal) before it asks anything new.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Ask, Proposal, split
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.strategy import Strategy

#: Consecutive repeats after which a strategy counts as repeating itself for ever.
MAX_REPEATS = 10_000


def evaluate(evaluator: Evaluator, asked: Ask) -> Result:
    """``asked`` evaluated at its fidelity (a bare genotype: the full budget)."""
    g, fidelity = split(asked)
    if isinstance(asked, Proposal) and asked.stop_below is not None:
        return evaluator.evaluate_at(g, fidelity, stop_below=asked.stop_below)
    return evaluator.evaluate(g) if fidelity is None else evaluator.evaluate_at(g, fidelity)


def ask_and_tell(strategy: Strategy, evaluator: Evaluator, n: int) -> list[Genotype | Proposal]:
    """Ask and tell ``n`` times, repeats included; what was asked, in order."""
    asked = []
    for _ in range(n):
        g = strategy.ask()
        asked.append(g)
        strategy.tell(g, evaluate(evaluator, g))
    return asked


def drive(
    strategy: Strategy, evaluator: Evaluator, trials: int, *, replay: Sequence[Trial] = ()
) -> list[Trial]:
    """Up to ``trials`` distinct trials, as a run records them (see the module's docstring);
    ``replay``'s trials answer the first asks, each of which must be the one recorded."""
    history: list[Trial] = []
    seen: dict[tuple[Genotype, int | None], Result] = {}
    repeats = 0
    while len(history) < trials and not strategy.finished and repeats < MAX_REPEATS:
        asked = strategy.ask()
        g, fidelity = split(asked)
        if (g, fidelity) in seen:
            strategy.tell(asked, seen[g, fidelity])
            repeats += 1
            continue
        repeats = 0
        if len(history) < len(replay):
            old = replay[len(history)]
            assert (old.genotype, old.fidelity) == (g, fidelity), (
                f"replay diverges at trial {len(history)}: asked {g} at {fidelity}, "
                f"recorded {old.genotype} at {old.fidelity}"
            )
            result = old.result
        else:
            result = evaluate(evaluator, asked)
        strategy.tell(asked, result)
        seen[g, fidelity] = result
        history.append(Trial(index=len(history), genotype=g, result=result, fidelity=fidelity))
    return history


def first_difference(a: Sequence[object], b: Sequence[object]) -> str:
    """Where two sequences first differ, for a kit's failure message."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"first at position {i}: {x} vs {y}"
    return f"{len(a)} vs {len(b)} items" if len(a) != len(b) else "none"


def through_json(trials: Sequence[Trial]) -> list[Trial]:
    """``trials`` as a journal gives them back (written as JSON, read again)."""
    return [Trial.from_json(json.loads(json.dumps(t.to_json()))) for t in trials]

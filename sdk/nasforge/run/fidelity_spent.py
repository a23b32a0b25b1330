"""What a multi-fidelity run spent, and which of its trials count as full evaluations.

A trial evaluated below the evaluator's full budget, or stopped early, is a cheap guess:
the run counts what it spent (:func:`fidelity_spent`) and picks its best among full
evaluations (:func:`at_full`); reports and ``inspect`` show the same numbers.

Named apart from :mod:`nasforge.kernel.fidelity`, the contract by which a strategy asks
for a fidelity and an evaluator serves it: this module counts what a run's trials spent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nasforge.kernel.fidelity import max_fidelity


def fidelity_spent(fidelities: Iterable[int | None], evaluator: Any) -> int | None:
    """The budget a run's trials spent (e.g. training epochs), a full evaluation counting
    the evaluator's full budget; None when the evaluator declares no fidelity."""
    full = max_fidelity(evaluator)
    if full is None:
        return None
    return sum(full if f is None else f for f in fidelities)


def trial_spent(trial: Any, evaluator: Any) -> int | None:
    """What one trial spent of the evaluator's budget (:func:`budget_trained` under the
    evaluator's fidelity name)."""
    return budget_trained(trial, getattr(evaluator, "fidelity", None))


def budget_trained(trial: Any, name: str | None) -> int | None:
    """What one trial spent of the budget called ``name``: what its result says it trained
    (``metadata[name]``: a trial stopped early spent less than it was asked for), else
    its fidelity (None: the full budget). A report has the name but no evaluator."""
    done = trial.result.metadata.get(name) if name else None
    if isinstance(done, int) and not isinstance(done, bool):
        return done
    return trial.fidelity


def varies_budget(trials: Iterable[Any]) -> bool:
    """Whether any trial ran below the full budget or was stopped early: a multi-fidelity
    run, whose report and inspection show the budget."""
    return any(t.fidelity is not None or was_stopped(t) for t in trials)


def was_stopped(trial: Any) -> bool:
    """Whether a trial's evaluation was stopped early (by its proposal's ``stop_below``)."""
    return trial.result.metadata.get("stopped_at") is not None


def at_full(trial: Any, full: int | None) -> bool:
    """Whether a trial was evaluated at the full budget ``full`` (None: unknown, every
    trial counts as full) and not stopped early. A run's best (and front) is chosen among
    those once there are any: a short training's number is a cheap guess, not what the
    architecture reaches, and must not outrank a full one."""
    if was_stopped(trial):
        return False
    return trial.fidelity is None or full is None or trial.fidelity == full

"""A run's goal against what its evaluator measures and what its journal recorded.

A goal naming a number the evaluator never measures is refused before any trial
(:func:`check_declared`), or at its first successful result when the evaluator declares
nothing (:func:`check_measured`); readers without plugins (inspect, export, reports) take
the goal a journal's run searched under from its header (:func:`goal_of_header`).

Named apart from :mod:`nasforge.kernel.objectives`, which parses a goal and ranks results
by it (a value strategies receive): checking it against an evaluator and a journal is the
run's business.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from nasforge.kernel.errors import JournalError, OptionError, suggest
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.objectives import SearchGoal, as_objective, objective_text
from nasforge.kernel.option_types import first_line
from nasforge.kernel.result import Objective, Result

logger = logging.getLogger("nasforge.objectives")


def goal_of_header(header: Mapping[str, Any]) -> SearchGoal | None:
    """The goal a journal's run searched under, for readers without plugins (inspect, export).

    Journals record it (``goal``); older ones have the evaluator's ``objective`` and no
    constraints. None for a run without an objective (a one-shot
    run with no evaluator). A malformed record raises :class:`~nasforge.kernel.errors.JournalError`.
    """
    try:
        if "goal" in header:
            return SearchGoal.from_json(header["goal"])
        spec = header.get("spec") if isinstance(header.get("spec"), Mapping) else {}
        objectives = list(spec.get("objectives") or ())
        if not objectives and isinstance(header.get("objective"), Mapping):
            objectives = [as_objective(header["objective"])]
        if not objectives:
            return None
        return SearchGoal.of(objectives, list(spec.get("constraints") or ()))
    except (OptionError, TypeError, ValueError) as exc:
        raise JournalError(f"malformed header objectives or constraints ({first_line(exc)})") from exc


# --- names an evaluator measures ------------------------------------------------------------
def declared_objectives(evaluator: Any) -> dict[str, Objective] | None:
    """The objectives an evaluator declares its results carry, or None when it declares
    none beyond its own objective (the interface's default), and only its first result
    can tell."""
    own = getattr(type(evaluator), "objectives", None)
    if own is None or own is getattr(Evaluator, "objectives", None):
        return None
    declared = evaluator.objectives
    return dict(declared) if isinstance(declared, Mapping) else None


def _unknown(goal: SearchGoal, known: Iterable[str], by: str, what: str) -> None:
    known = sorted(known)
    names = [o.name for o in goal.objectives] + [c.name for c in goal.constraints]
    for name in dict.fromkeys(names):
        if name not in known:
            close = suggest(name, known)
            hint = f"; did you mean '{close}'?" if close else ""
            raise OptionError(f"{by} {what} no '{name}'{hint} (it {what}: {', '.join(known) or 'nothing'})")


def check_declared(goal: SearchGoal, evaluator: Any, *, warn: bool = True) -> None:
    """Refuse, before any trial, an objective or constraint the evaluator declares it never
    measures; with ``warn``, log where an objective runs against the declared direction (a
    likely slip: ``latency_ms:max``)."""
    declared = declared_objectives(evaluator)
    if declared is None:
        return
    by = f"evaluator '{getattr(evaluator, 'name', type(evaluator).__name__)}'"
    _unknown(goal, declared, by, "measures")
    for objective in goal.objectives if warn else ():
        own = declared[objective.name]
        if own.higher_is_better != objective.higher_is_better:
            logger.warning(
                "objective %s: %s counts %s values as better; searching for the %s, as asked",
                objective_text(objective),
                by,
                "larger" if own.higher_is_better else "smaller",
                "largest" if objective.higher_is_better else "smallest",
            )


def check_measured(goal: SearchGoal, result: Result, evaluator_name: str) -> None:
    """Refuse a goal naming what a successful result of the evaluator does not carry (for
    evaluators that declare nothing, checked on their first successful result)."""
    if not result.failed:
        _unknown(goal, result.objectives, f"evaluator '{evaluator_name}'", "reports")

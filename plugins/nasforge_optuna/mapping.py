"""A run's goal and results in Optuna's terms: directions, values, trial states, constraints.

Optuna optimises raw objective values in stated directions and takes constraints as named
numbers that are <= 0 when satisfied (``Trial.set_constraint``, which its samplers read);
a failed trial is a trial in state FAIL with no values. A nasforge result maps onto that one to one:

* each objective of the goal is an Optuna objective, ``maximize`` where higher is better;
* a failed result, or one missing an objective (or NaN, inf there), is a FAIL: Optuna
  refuses NaN values, and nothing unmeasured may pass for a value;
* a constraint ``name<=bound`` is ``value - bound``, ``name>=bound`` is ``bound - value``,
  named by its text; an unmeasured value is ``inf``, never feasible (as
  :class:`~nasforge.kernel.objectives.Constraint` rules).

Nothing here imports Optuna, so it is tested without it.
"""

from __future__ import annotations

import math

from nasforge.kernel.objectives import LE, SearchGoal
from nasforge.kernel.result import Result


def directions(goal: SearchGoal) -> list[str]:
    """Optuna's study directions of the goal's objectives, in order."""
    return ["maximize" if o.higher_is_better else "minimize" for o in goal.objectives]


def values(goal: SearchGoal, result: Result) -> list[float] | None:
    """Each objective's raw value, or None where the trial counts as failed."""
    if result.failed:
        return None
    out = [float(result.objectives.get(o.name, math.nan)) for o in goal.objectives]
    return out if all(math.isfinite(v) for v in out) else None


def constraint_values(goal: SearchGoal, result: Result) -> dict[str, float]:
    """One number per constraint, by its text, <= 0 when it holds (``inf`` when unmeasured)."""
    out = {}
    for c in goal.constraints:
        value = c.value(result)
        out[c.text()] = (
            math.inf if not math.isfinite(value) else (value - c.bound if c.op == LE else c.bound - value)
        )
    return out

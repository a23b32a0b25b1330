"""Search budgets: trials, wall seconds, or simulated seconds (whichever runs out first).

A budget is a number a run can reach. Infinity, NaN and values no run will ever spend
(a billion trials, thirty years) are refused when the budget is made: a run given one
would go on until killed, and a budget that is no limit is better said as a smaller one.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, cast

import attrs

from nasforge.kernel.errors import BudgetError, show

#: The most trials a budget may allow (a search of a billion evaluations is a typo).
MAX_TRIALS = 10**9
#: The most seconds, wall or simulated, a budget may allow (about 31 years).
MAX_SECONDS = 1e9


def _trials(_inst: Any, attr: attrs.Attribute, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BudgetError(f"budget trials must be a whole number, got {show(value)}")
    _in_range(attr, cast(int, value), MAX_TRIALS)  # an Integral, checked above


def _seconds(_inst: Any, attr: attrs.Attribute, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        name = attr.name.replace("_", "-")
        raise BudgetError(f"budget {name} must be a finite number of seconds, got {show(value)}")
    _in_range(attr, cast(float, value), MAX_SECONDS)  # a Real, checked above


def _in_range(attr: attrs.Attribute, value: float, most: float) -> None:
    name = attr.name.replace("_", "-")
    if not value > 0:
        raise BudgetError(f"budget {name} must be positive, got {value}")
    if value > most:
        raise BudgetError(
            f"budget {name} must be at most {most:,.0f}, a limit a run can reach; got {show(value)}"
        )


@attrs.frozen
class Budget:
    """When a search stops. At least one limit must be set."""

    trials: int | None = attrs.field(default=None, validator=_trials)
    seconds: float | None = attrs.field(default=None, validator=_seconds)
    simulated_seconds: float | None = attrs.field(default=None, validator=_seconds)

    def __attrs_post_init__(self) -> None:
        if self.trials is None and self.seconds is None and self.simulated_seconds is None:
            raise BudgetError("a budget needs trials, seconds or simulated seconds")

    def exhausted(self, *, trials: int, seconds: float, simulated_seconds: float) -> bool:
        return (
            (self.trials is not None and trials >= self.trials)
            or (self.seconds is not None and seconds >= self.seconds)
            or (self.simulated_seconds is not None and simulated_seconds >= self.simulated_seconds)
        )

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Budget:
        return cls(**data)

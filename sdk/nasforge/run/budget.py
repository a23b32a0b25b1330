"""Search budgets: trials, wall seconds, or simulated seconds (whichever runs out first)."""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.errors import BudgetError


def _positive_or_none(_inst: Any, attr: attrs.Attribute, value: float | None) -> None:
    if value is not None and not value > 0:
        raise BudgetError(f"budget {attr.name.replace('_', '-')} must be positive, got {value}")


@attrs.frozen
class Budget:
    """When a search stops. At least one limit must be set."""

    trials: int | None = attrs.field(default=None, validator=_positive_or_none)
    seconds: float | None = attrs.field(default=None, validator=_positive_or_none)
    simulated_seconds: float | None = attrs.field(default=None, validator=_positive_or_none)

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

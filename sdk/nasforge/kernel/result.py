"""Values that flow from evaluators to strategies and into the journal."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from nasforge.kernel.converters import to_dict
from nasforge.kernel.genotype import Genotype


def _finite_or_nan(_inst: Any, attr: attrs.Attribute, value: dict[str, float]) -> None:
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, int | float):
            raise TypeError(f"Result.{attr.name} must map str to float, got {k!r}: {v!r}")


@attrs.frozen
class Objective:
    """Which objective a strategy optimises, and in which direction."""

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    higher_is_better: bool = True

    def fitness(self, result: Result) -> float:
        """The objective as a number to maximise; failed or NaN results rank last."""
        value = result.objectives.get(self.name, math.nan)
        if result.failed or not math.isfinite(value):
            return -math.inf
        return value if self.higher_is_better else -value

    def rank(self, result: Result) -> tuple[float, ...]:
        """How results order for a best, larger first (a goal with constraints or several
        objectives ranks feasibility first and breaks ties on the later objectives)."""
        return (self.fitness(result),)


@attrs.frozen
class Result:
    """What evaluating one genotype produced.

    ``cost`` is in seconds: simulated seconds for tabular benchmarks, wall seconds
    otherwise, so budgets and anytime curves treat both the same way.
    """

    objectives: dict[str, float] = attrs.field(converter=to_dict, validator=_finite_or_nan)
    cost: float = attrs.field(default=0.0, converter=float)
    metadata: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    failed: bool = False
    error: str | None = None

    @cost.validator
    def _cost_non_negative(self, _attr: attrs.Attribute, value: float) -> None:
        if not value >= 0:
            raise ValueError(f"Result.cost must be >= 0, got {value}")

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(**data)


@attrs.frozen
class Trial:
    """One finished evaluation, as the journal records it."""

    index: int
    genotype: Genotype
    result: Result
    wall_seconds: float = 0.0
    #: The budget it was evaluated at (e.g. epochs; :mod:`nasforge.kernel.fidelity`); None: the
    #: evaluator's full budget (every trial of a journal written before fidelities existed).
    fidelity: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "index": self.index,
            "genotype": self.genotype.to_json(),
            "result": self.result.to_json(),
            "wall_seconds": self.wall_seconds,
        }
        if self.fidelity is not None:  # absent at full fidelity: such records read as before
            data["fidelity"] = self.fidelity
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Trial:
        return cls(
            index=int(data["index"]),
            genotype=Genotype.from_json(data["genotype"]),
            result=Result.from_json(data["result"]),
            wall_seconds=float(data.get("wall_seconds", 0.0)),
            fidelity=None if data.get("fidelity") is None else int(data["fidelity"]),
        )


def best_trial(trials: Sequence[Trial], objective: Objective) -> Trial | None:
    """The trial ``objective`` ranks best; the earliest wins ties, failures rank last.

    With a :class:`~nasforge.kernel.objectives.SearchGoal` an infeasible trial is best only
    when no trial is feasible (callers check).
    """
    if not trials:
        return None
    return max(trials, key=lambda t: (*objective.rank(t.result), -t.index))

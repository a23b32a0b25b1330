"""A JSON-able description of a search: what the CLI builds and the journal records.

Because a run can be rebuilt from its spec alone, ``nasforge resume DIR`` needs no
arguments and a journal can never be resumed with different settings by accident.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.budget import Budget
from nasforge.errors import NasforgeError
from nasforge.registry import Registry


def _json_dict(_inst: Any, attr: attrs.Attribute, value: dict[str, Any]) -> None:
    if not all(isinstance(k, str) for k in value):
        raise NasforgeError(f"{attr.name} keys must be strings")


@attrs.frozen
class ExperimentSpec:
    space: str
    strategy: str
    evaluator: str
    budget: Budget
    dataset: str | None = None
    seed: int = attrs.field(default=0, converter=int)
    space_options: dict[str, Any] = attrs.field(factory=dict, converter=dict, validator=_json_dict)
    strategy_options: dict[str, Any] = attrs.field(factory=dict, converter=dict, validator=_json_dict)
    evaluator_options: dict[str, Any] = attrs.field(factory=dict, converter=dict, validator=_json_dict)
    executor: str = "inprocess"
    workers: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    dedup: bool = True

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["budget"] = self.budget.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExperimentSpec:
        data = dict(data)
        data["budget"] = Budget.from_json(data["budget"])
        return cls(**data)

    def build(self, registry: Registry) -> tuple[Any, Any, Any, Any]:
        """Instantiate (space, evaluator, strategy, executor) through the registry."""
        space = registry.get("space", self.space)(**self.space_options)
        evaluator_cls = registry.get("evaluator", self.evaluator)
        if evaluator_cls.spaces and space.name not in evaluator_cls.spaces:
            raise NasforgeError(
                f"evaluator '{self.evaluator}' works on spaces {sorted(evaluator_cls.spaces)}, "
                f"not '{space.name}'"
            )
        evaluator = evaluator_cls(space, dataset=self.dataset, **self.evaluator_options)
        strategy = registry.get("strategy", self.strategy)(
            space, objective=evaluator.objective, seed=self.seed, **self.strategy_options
        )
        executor = registry.get("executor", self.executor)(workers=self.workers)
        return space, evaluator, strategy, executor

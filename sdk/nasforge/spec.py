"""A JSON-able description of a search: what the CLI builds and the journal records.

Because a run can be rebuilt from its spec alone, ``nasforge resume DIR`` needs no
arguments and a journal can never be resumed with different settings by accident.
"""

from __future__ import annotations

import difflib
import inspect
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
        space = construct("search space", registry.get("space", self.space), self.space_options)
        evaluator_cls = registry.get("evaluator", self.evaluator)
        if evaluator_cls.spaces and space.name not in evaluator_cls.spaces:
            raise NasforgeError(
                f"evaluator '{self.evaluator}' works on spaces {sorted(evaluator_cls.spaces)}, "
                f"not '{space.name}'"
            )
        evaluator = construct("evaluator", evaluator_cls, self.evaluator_options, space, dataset=self.dataset)
        strategy = construct(
            "strategy",
            registry.get("strategy", self.strategy),
            self.strategy_options,
            space,
            objective=evaluator.objective,
            seed=self.seed,
        )
        executor = registry.get("executor", self.executor)(workers=self.workers)
        return space, evaluator, strategy, executor


def construct(kind: str, cls: Any, options: dict[str, Any], *args: Any, **fixed: Any) -> Any:
    """``cls(*args, **fixed, **options)``, with unknown user options named in one line."""
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if not takes_any:
        accepted = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n not in fixed]
        for key in options:
            if key not in accepted:
                close = difflib.get_close_matches(key, accepted, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise NasforgeError(
                    f"{kind} '{cls.name}' does not accept option '{key}'{hint} "
                    f"(accepts: {', '.join(accepted) or 'no options'})"
                )
    return cls(*args, **fixed, **options)

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
    """Names and options of everything a run is made of.

    For ask/tell strategies ``evaluator`` and ``budget`` are required and ``dataset`` is
    the evaluator's; for one-shot strategies (DARTS, NASI, ...) ``dataset`` is the
    training data, the budget lives in the strategy's options (epochs), and an evaluator,
    if named, scores the final architecture (its dataset in ``evaluator_options``).
    """

    space: str
    strategy: str
    evaluator: str | None
    budget: Budget | None
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
        data["budget"] = self.budget.to_json() if self.budget is not None else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExperimentSpec:
        data = dict(data)
        data["budget"] = Budget.from_json(data["budget"]) if data.get("budget") else None
        return cls(**data)

    def build(self, registry: Registry) -> tuple[Any, Any, Any, Any]:
        """Instantiate (space, evaluator, strategy, executor) of an ask/tell run."""
        if self.evaluator is None or self.budget is None:
            raise NasforgeError(f"strategy '{self.strategy}' needs an evaluator and a budget")
        space = self.build_space(registry)
        evaluator = self.build_evaluator(registry, space, dataset=self.dataset)
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

    def build_space(self, registry: Registry) -> Any:
        return construct("search space", registry.get("space", self.space), self.space_options)

    def build_evaluator(self, registry: Registry, space: Any, *, dataset: str | None) -> Any:
        assert self.evaluator is not None
        evaluator_cls = registry.get("evaluator", self.evaluator)
        if evaluator_cls.spaces and space.name not in evaluator_cls.spaces:
            raise NasforgeError(
                f"evaluator '{self.evaluator}' works on spaces {sorted(evaluator_cls.spaces)}, "
                f"not '{space.name}'"
            )
        options = {k: v for k, v in self.evaluator_options.items() if k != "dataset"}
        return construct("evaluator", evaluator_cls, options, space, dataset=dataset)


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
    try:
        return cls(*args, **fixed, **options)
    except TypeError as exc:  # e.g. an attrs config rejecting an unknown field
        if "unexpected keyword" in str(exc) or "got an unexpected" in str(exc):
            raise NasforgeError(f"{kind} '{cls.name}': {exc}") from exc
        raise

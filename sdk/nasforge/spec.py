"""A JSON-able description of a search: what the CLI builds and the journal records.

Because a run can be rebuilt from its spec alone, ``nasforge resume DIR`` needs no
arguments and a journal can never be resumed with different settings by accident.
Everything in a spec is user input (from the command line or from a journal file), so
its fields and every option it passes to a constructor are checked against the declared
types before anything is built: a wrong value is one line naming the option, never a
traceback from deep inside a plugin.
"""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import attrs

from nasforge.budget import Budget
from nasforge.errors import NasforgeError
from nasforge.option_types import (
    INT_MAX,
    INT_MIN,
    OptionError,
    as_dict,
    check_options,
    first_line,
    in_range,
    show,
    typed,
)
from nasforge.registry import Registry


def _seed(value: Any) -> int:
    """Seeds may be any integral number (numpy's too), within the 64 bits torch accepts."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionError(f"seed must be an integer, got {show(value)}")
    if not INT_MIN <= int(value) <= INT_MAX:
        raise OptionError(f"seed must fit in 64 bits, got {show(int(value))}")
    return int(value)


@attrs.frozen
class ExperimentSpec:
    """Names and options of everything a run is made of.

    For ask/tell strategies ``evaluator`` and ``budget`` are required and ``dataset`` is
    the evaluator's; for one-shot strategies (DARTS, NASI, ...) ``dataset`` is the
    training data, the budget lives in the strategy's options (epochs), and an evaluator,
    if named, scores the final architecture (its dataset in ``evaluator_options``).
    """

    space: str = attrs.field(validator=typed)
    strategy: str = attrs.field(validator=typed)
    evaluator: str | None = attrs.field(validator=typed)
    budget: Budget | None = attrs.field(validator=typed)
    dataset: str | None = attrs.field(default=None, validator=typed)
    seed: int = attrs.field(default=0, converter=_seed)
    space_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    strategy_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    evaluator_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    executor: str = attrs.field(default="inprocess", validator=typed)
    workers: int = attrs.field(default=1, validator=[typed, in_range(ge=1)])
    dedup: bool = attrs.field(default=True, validator=typed)

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["budget"] = self.budget.to_json() if self.budget is not None else None
        return data

    @classmethod
    def from_json(cls, data: Any) -> ExperimentSpec:
        """The spec a journal header recorded; a hand-edited or foreign one fails in one line."""
        if not isinstance(data, dict):
            raise NasforgeError(f"run spec must be an object, got {show(data)}")
        data = dict(data)
        missing = [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING and f.name not in data]
        if missing:
            raise NasforgeError(f"run spec lacks {', '.join(repr(m) for m in missing)}")
        budget = data.get("budget")
        if budget:
            if not isinstance(budget, dict):
                raise NasforgeError(f"run spec: budget must be an object, got {show(budget)}")
            check_options("run spec budget", Budget, budget)
            data["budget"] = Budget.from_json(budget)
        else:
            data["budget"] = None
        check_options("run spec", cls, data)
        try:
            return cls(**data)
        except OptionError as exc:
            raise OptionError(f"run spec: {exc}") from exc

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
    """``cls(*args, **fixed, **options)``, with a bad user option named in one line.

    Options are checked against the constructor's signature and type hints first; what
    the constructor itself then rejects (a plugin's own range checks) is re-raised as an
    :class:`OptionError` naming the component. A TypeError without user options is a bug
    in the component and stays one.
    """
    owner = f"{kind} '{getattr(cls, 'name', getattr(cls, '__name__', cls))}'"
    params = inspect.signature(cls).parameters
    accepted = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n not in fixed]
    check_options(owner, cls, options, accepted=accepted)
    try:
        return cls(*args, **fixed, **options)
    except OptionError as exc:
        message = str(exc)
        raise OptionError(message if message.startswith(owner) else f"{owner}: {message}") from exc
    except NasforgeError:
        raise
    except ValueError as exc:
        raise OptionError(f"{owner}: {first_line(exc)}") from exc
    except TypeError as exc:
        if not options:
            raise
        raise OptionError(f"{owner}: {first_line(exc)}") from exc

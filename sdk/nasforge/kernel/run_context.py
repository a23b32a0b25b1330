"""The run context: what a run hands every component it builds, as one typed value.

A run builds a search space, a strategy, an evaluator, metrics and an executor, and some
of them need something of the run itself: its seed, the registry other components come
from, the device, the training data it loaded, where its parallel work goes, the
evaluator's full budget, the options of every network it builds, whether to draw a
progress bar, and a logger. All of it is one frozen :class:`RunContext`, and a component
receives what it needs of it through one hook:

- **declare** the fields in ``context_fields`` (a class attribute; a strategy always gets
  ``seed``), and the run passes each, where it holds a value, to the constructor as a
  keyword argument of the same name::

      class MyStrategy(Strategy):
          name = "my-strategy"
          context_fields = Strategy.context_fields | {"registry", "data"}

          def __init__(self, space, *, objective, seed=0, registry=None, data=None, width=4):
              ...

- or, for what a declaration cannot say (the whole context, for an inner component it
  builds itself; a field under another name), define the classmethod
  ``from_context(cls, context, *args, **options)``: the run then calls it instead, with
  the arguments it would have passed the constructor (a strategy: the space and
  ``objective=``; an evaluator: the space and ``dataset=``) and the user's options.

Why a declaration rather than matching constructor parameter names, and rather than a
method every component must write: the declaration is data, so the registry, ``nasforge
plugins`` and the conformance kits check it without building anything
(:func:`~nasforge.kernel.context_fields.construction_mistake`): a field the context does
not hold (``sead``), or a constructor that does not take what is passed, is one line
naming the component when its plugin loads, never a silent default or a traceback at the
first search. The constructor stays an ordinary constructor that tests and host programs
call directly, and a component that needs nothing of the run writes nothing.
:func:`build_from_context` is the call a run (and a kit) makes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from nasforge.kernel.context_fields import (
    FIELDS,
    USER_MAY_SET,
    construction_mistake,
    declared_fields,
    run_call,
)
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.parallelism import Parallelism

if TYPE_CHECKING:
    from nasforge.kernel.datasets import TensorData
    from nasforge.kernel.registry import Registry

#: The logger a context carries unless a run names another.
RUN_LOGGER = "nasforge.run"


def _seed(_inst: Any, _attr: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NasforgeError(f"a run context's seed must be an integer, got {value!r}")


def _optional_text(_inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise NasforgeError(f"a run context's {attr.name} must be text or None, got {value!r}")


def _optional_budget(_inst: Any, _attr: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise NasforgeError(f"a run context's max_fidelity must be an integer >= 1 or None, got {value!r}")


def _build_options(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen
class RunContext:
    """What a run gives the components it builds.

    ``seed``: the run's seed (``--seed``). ``registry``: where the run's components come
    from, for a component that looks up others (a metric made of metrics, a strategy that
    warm-starts another). ``device``: the device the user named (``--device``), None for
    the component's own default. ``data``: the training data the run loaded (one-shot
    searches, evaluators that train, strategies that score on it), None when it has none.
    ``parallelism``: the executor and workers the run's trials go to, where a strategy
    runs heavy work of its own. ``max_fidelity``: the evaluator's full budget (its
    epochs) for multi-fidelity strategies, None when the evaluator declares no fidelity.
    ``build_options``: network options every network of the run is built with (``C``,
    ``N``). ``progress``: whether the component may draw a progress bar. ``logger``:
    where a component's status records go.
    """

    seed: int = attrs.field(default=0, validator=_seed)
    registry: Registry | None = None
    device: str | None = attrs.field(default=None, validator=_optional_text)
    data: TensorData | None = None
    parallelism: Parallelism = attrs.field(factory=Parallelism)
    max_fidelity: int | None = attrs.field(default=None, validator=_optional_budget)
    build_options: dict[str, Any] = attrs.field(factory=dict, converter=_build_options)
    progress: bool = False
    logger: logging.Logger = attrs.field(factory=lambda: logging.getLogger(RUN_LOGGER))

    def holds(self, name: str) -> bool:
        """Whether the run has a value for field ``name`` (no data, no device named, no
        fidelity and no build options are "nothing to give": the component's own default
        then stands, as it would had the run not named it)."""
        value = getattr(self, name)
        return value is not None and not (name == "build_options" and not value)

    def arguments_for(self, kind: str, component: Any, options: Mapping[str, Any] = {}) -> dict[str, Any]:  # noqa: B006
        """The keyword arguments a run passes ``component`` (a ``kind``) besides its options:
        each field it is built with that the run holds (a strategy's ``seed`` always), and
        an executor's ``workers``, unless a user option of the same name is given (only
        fields in :data:`USER_MAY_SET` can be: the run refuses others)."""
        _, _, fields = run_call(kind, component)
        given = {name: getattr(self, name) for name in sorted(fields) if self.holds(name)}
        if kind == "executor":
            given["workers"] = self.parallelism.workers
        return {name: value for name, value in given.items() if name not in options}


class ContextError(NasforgeError):
    """A component cannot be built from a run context (a plugin author's mistake, or a
    run that cannot give what a component needs)."""


def build_from_context(kind: str, cls: Any, context: RunContext, *args: Any, **options: Any) -> Any:
    """``cls`` (a ``kind``: space, strategy, evaluator, metric, executor) built for a run:
    ``cls.from_context(context, *args, **options)`` where the class defines that hook,
    else ``cls(*args, **fields, **options)`` with the context fields it is built with
    (:meth:`RunContext.arguments_for`). ``args`` and ``options`` include the keywords a run
    passes every component of the kind (a strategy's ``objective``, an evaluator's
    ``dataset``). The run's own checks of the user's options and its one-line errors are
    :func:`nasforge.run.construction.build_component`'s; this is the bare call."""
    hook = getattr(cls, "from_context", None)
    if hook is not None:
        return hook(context, *args, **options)
    return cls(*args, **context.arguments_for(kind, cls, options), **options)


if tuple(a.name for a in attrs.fields(RunContext)) != FIELDS:  # one list, two homes: keep them one
    raise AssertionError("nasforge.kernel.context_fields.FIELDS must list RunContext's fields in order")

__all__ = [
    "FIELDS",
    "USER_MAY_SET",
    "ContextError",
    "RunContext",
    "build_from_context",
    "construction_mistake",
    "declared_fields",
]

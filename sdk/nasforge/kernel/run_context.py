"""The run context: what a run hands every component it builds, as one typed value.

A run builds a search space, a strategy, an evaluator, metrics and an executor, and some
of them need something of the run itself: its seed, the registry other components come
from, the device, the training data it loaded, where its parallel work goes, the
evaluator's full budget, the options of every network it builds, whether to draw a
progress bar, and a logger. All of it is one frozen :class:`RunContext`, handed over
through one hook, :meth:`ContextBuilt.from_context`, a classmethod every component
base class (``SearchSpace``, ``Strategy``, ``OneShotStrategy``, ``Evaluator``,
``Metric``, ``Executor``) has.

Why a classmethod and a declaration, not matching constructor parameter names: a
component says which fields it is built with (:attr:`ContextBuilt.context_fields`), and
the default ``from_context`` passes exactly those to the constructor as keyword
arguments of the same names. Because the declaration is data, the registry, ``nasforge
plugins`` and the conformance kits check it without building anything
(:func:`construction_mistake`): a field the context does not hold (``sead``) or a
constructor that does not take what its ``from_context`` passes is one line naming the
component when the plugin loads, never a silent default or a traceback at the first
search. A component that needs something else (the whole context for an inner strategy,
a field under another name) overrides ``from_context``; the constructor stays an
ordinary constructor that tests and host programs call directly.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self

import attrs

from nasforge.kernel.errors import NasforgeError, suggest
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

    def arguments_for(self, component: Any, options: Mapping[str, Any] = {}) -> dict[str, Any]:  # noqa: B006
        """The keyword arguments the default :meth:`ContextBuilt.from_context` passes: each
        field ``component`` declares that the run holds, unless a user option of the same
        name is given (only fields in :data:`USER_MAY_SET` can be; the run refuses others)."""
        return {
            name: getattr(self, name)
            for name in sorted(declared_fields(component))
            if self.holds(name) and name not in options
        }


#: Every field of a run context, by name.
FIELDS: tuple[str, ...] = tuple(a.name for a in attrs.fields(RunContext))
#: Fields a user option may set for one component (``-o device=cuda:1``, ``-o
#: max_fidelity=9``, ``-o progress=false``); every other field is the run's alone, and an
#: option of its name is refused for a component that declares it.
USER_MAY_SET = frozenset({"device", "max_fidelity", "progress"})


class ContextBuilt:
    """The hook through which a run builds a component: :meth:`from_context`.

    Every component base class inherits it. A component declares the run-context fields
    it is built with in :attr:`context_fields`; the default :meth:`from_context` passes
    each (where the run holds a value, and no user option of that name was given) to the
    constructor as a keyword argument of the same name::

        class MyStrategy(Strategy):
            name = "my-strategy"
            context_fields = Strategy.context_fields | {"registry", "data"}

            def __init__(self, space, *, objective, seed=0, registry=None, data=None, width=4):
                ...

    Override :meth:`from_context` when a component needs something the declaration cannot
    say (the whole context, for an inner component it builds itself).
    """

    #: The run-context fields this component is built with (see the class docstring).
    context_fields: ClassVar[frozenset[str]] = frozenset()
    #: What the run passes besides context fields and user options: how many positional
    #: arguments and which keywords (a strategy: the space, ``objective``). Set by the
    #: kernel's base classes; the checks of :func:`construction_mistake` read it.
    built_with: ClassVar[tuple[int, frozenset[str]]] = (0, frozenset())

    @classmethod
    def from_context(cls, context: RunContext, *args: Any, **options: Any) -> Self:
        """This component as a run builds it: ``cls(*args, **fields, **options)``, the
        fields being :meth:`RunContext.arguments_for` this class."""
        return cls(*args, **context.arguments_for(cls, options), **options)


class ContextError(NasforgeError):
    """A component cannot be built from a run context (a plugin author's mistake, or a
    run that cannot give what a component needs)."""


#: What the run passes a component of each kind that has no ``from_context`` (written
#: before the hook existed): positional arguments, keywords, context fields.
KIND_CALLS: dict[str, tuple[int, frozenset[str], frozenset[str]]] = {
    "space": (0, frozenset(), frozenset()),
    "strategy": (1, frozenset({"objective"}), frozenset({"seed"})),
    "evaluator": (1, frozenset({"dataset"}), frozenset()),
    "metric": (0, frozenset(), frozenset()),
    "executor": (0, frozenset({"workers"}), frozenset()),
}


_KIND_WORDS = {"space": "search space"}


def declared_fields(component: Any) -> frozenset[str]:
    """The context fields ``component`` (a class or instance) declares; none if it does not."""
    fields = getattr(component, "context_fields", frozenset())
    return frozenset(fields) if isinstance(fields, Iterable) and not isinstance(fields, str) else frozenset()


def declares_hook(cls: Any) -> bool:
    """Whether ``cls`` (or a class between it and the kernel's base) declares its context
    fields or its own ``from_context``: a component written for the hook. One that does
    neither was written before it (the run's adapter then reads its constructor)."""
    for klass in inspect.getmro(cls) if isinstance(cls, type) else ():
        if klass.__module__.startswith("nasforge.kernel."):
            continue
        if "context_fields" in vars(klass) or "from_context" in vars(klass):
            return True
    return False


def overrides_hook(cls: Any) -> bool:
    """Whether ``from_context`` of ``cls`` is its own (not the kernel's default)."""
    for klass in inspect.getmro(cls) if isinstance(cls, type) else ():
        if "from_context" in vars(klass):
            return not klass.__module__.startswith("nasforge.kernel.")
    return False


def keyword_parameters(target: Any, *, skip: int = 0) -> tuple[list[str], bool] | None:
    """The names ``target`` (a class or function) takes by keyword, in order, less its first
    ``skip`` positional parameters (those a caller fills by position), and whether it takes
    any keyword (``**options``); None when it has no signature to read."""
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    filled = {p.name for p in positional[:skip]}
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in params if p.kind in kinds and p.name not in filled]
    return names, any(p.kind is p.VAR_KEYWORD for p in params)


def _positional_room(target: Any) -> int | None:
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _own_fields(cls: Any) -> frozenset[str]:
    """The context fields ``cls`` declares beyond the kernel base's."""
    for klass in inspect.getmro(cls) if isinstance(cls, type) else ():
        if "context_fields" in vars(klass):
            if klass.__module__.startswith("nasforge.kernel."):
                return frozenset()
            base = next((b for b in klass.__mro__[1:] if "context_fields" in vars(b)), None)
            return declared_fields(klass) - (declared_fields(base) if base is not None else frozenset())
    return frozenset()


def run_call(kind: str, cls: Any) -> tuple[int, frozenset[str], frozenset[str]]:
    """(positional arguments, keywords, context fields) the run passes ``cls``'s constructor
    through the default hook: the class's own declaration, else its kind's."""
    positional, keywords, fields = KIND_CALLS.get(kind, (0, frozenset(), frozenset()))
    built_with = getattr(cls, "built_with", None)
    if isinstance(built_with, tuple) and len(built_with) == 2:
        positional, keywords = built_with[0], frozenset(built_with[1])
    if hasattr(cls, "from_context"):
        fields = declared_fields(cls)
    return positional, keywords, fields


def construction_mistake(kind: str, name: str, cls: Any) -> str | None:
    """Why a run could not build ``cls`` (registered as ``name``) through its hook, in one
    line naming it, or None. Read from the declaration and the constructor's signature
    alone, so ``nasforge plugins``, the registry and the kits catch it before any search:
    a declared field the context does not hold, a constructor that does not take a
    keyword the default ``from_context`` passes (``seed`` where it says ``sead``), or one
    with no room for the run's positional arguments."""
    owner = f"{_KIND_WORDS.get(kind, kind)} '{name}'"
    raw = getattr(cls, "context_fields", frozenset())
    if isinstance(raw, str) or not isinstance(raw, Iterable) or not all(isinstance(f, str) for f in raw):
        return f"{owner}: context_fields must be a set of field names, got {raw!r}"
    for field in sorted(declared_fields(cls)):
        if field not in FIELDS:
            close = suggest(field, FIELDS)
            hint = f"; did you mean '{close}'?" if close else ""
            return (
                f"{owner} declares context field '{field}', which a run context does not hold{hint} "
                f"(it holds: {', '.join(FIELDS)})"
            )
    if overrides_hook(cls):
        return None  # its own from_context: only building it tells (the kits do)
    positional, keywords, fields = run_call(kind, cls)
    taken = keyword_parameters(cls)
    if taken is None:
        return None
    names, takes_any = taken
    own = _own_fields(cls)
    if not takes_any:
        for keyword in sorted(keywords | fields):
            if keyword not in names:
                close = suggest(keyword, names)
                hint = f"; did you mean '{close}'?" if close else ""
                what = (
                    "which its context_fields declare"
                    if keyword in own
                    else f"which the run passes every {_KIND_WORDS.get(kind, kind)}"
                )
                return f"{owner}: its constructor takes no '{keyword}', {what}{hint}"
    room = _positional_room(cls)
    if room is not None and room < positional:
        return f"{owner}: its constructor takes {room} positional argument(s); the run passes {positional}"
    return None


__all__ = [
    "FIELDS",
    "KIND_CALLS",
    "USER_MAY_SET",
    "ContextBuilt",
    "ContextError",
    "RunContext",
    "construction_mistake",
    "declared_fields",
    "declares_hook",
    "keyword_parameters",
    "overrides_hook",
    "run_call",
]

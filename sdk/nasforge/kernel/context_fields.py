"""The fields a run context holds, and the checks of a component's declaration against them.

Apart from :mod:`nasforge.kernel.run_context` (the value and the hook) because the
registry checks every component it registers (:func:`construction_mistake`) and must not
depend on what a context's values are (training data, the registry itself).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from nasforge.kernel.errors import suggest

#: Every field of a run context, by name, in order (:class:`~nasforge.kernel.run_context.RunContext`).
FIELDS: tuple[str, ...] = (
    "seed",
    "registry",
    "device",
    "data",
    "parallelism",
    "max_fidelity",
    "build_options",
    "progress",
    "logger",
)
#: Fields a user option may set for one component (``-o device=cuda:1``, ``-o
#: max_fidelity=9``, ``-o progress=false``); every other field is the run's alone, and an
#: option of its name is refused for a component that declares it.
USER_MAY_SET = frozenset({"device", "max_fidelity", "progress"})

#: What a run passes a component of each kind besides its options: positional arguments,
#: keywords, and the context fields every one of the kind gets (whatever it declares).
#: A one-shot strategy (it has ``fit``, not ``ask``) gets neither a space nor an objective.
KIND_CALLS: dict[str, tuple[int, frozenset[str], frozenset[str]]] = {
    "space": (0, frozenset(), frozenset()),
    "strategy": (1, frozenset({"objective"}), frozenset({"seed"})),
    "one-shot strategy": (0, frozenset(), frozenset({"seed"})),
    "evaluator": (1, frozenset({"dataset"}), frozenset()),
    "metric": (0, frozenset(), frozenset()),
    "executor": (0, frozenset({"workers"}), frozenset()),
}


_KIND_WORDS = {"space": "search space"}


def declared_fields(component: Any) -> frozenset[str]:
    """The context fields ``component`` (a class or instance) declares; none if it does not."""
    fields: object = getattr(component, "context_fields", frozenset())
    return frozenset(fields) if isinstance(fields, Iterable) and not isinstance(fields, str) else frozenset()


def overrides_hook(cls: Any) -> bool:
    """Whether ``cls`` defines its own ``from_context`` (the run then calls it)."""
    return callable(getattr(cls, "from_context", None))


def call_kind(kind: str, cls: Any) -> str:
    """``kind`` as :data:`KIND_CALLS` keys it: a strategy with ``fit`` and no ``ask`` is
    one-shot; a search space is a space."""
    if kind == "strategy" and not hasattr(cls, "ask") and hasattr(cls, "fit"):
        return "one-shot strategy"
    return "space" if kind == "search space" else kind


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
    """(positional arguments, keywords, context fields) a run passes ``cls``'s constructor:
    its kind's (:data:`KIND_CALLS`) and the fields it declares."""
    positional, keywords, fields = KIND_CALLS.get(call_kind(kind, cls), (0, frozenset(), frozenset()))
    return positional, keywords, fields | declared_fields(cls)


def construction_mistake(kind: str, name: str, cls: Any) -> str | None:
    """Why a run could not build ``cls`` (registered as ``name``) through its hook, in one
    line naming it, or None. Read from the declaration and the constructor's signature
    alone, so ``nasforge plugins``, the registry and the kits catch it before any search:
    a declared field the context does not hold, a constructor that does not take a
    keyword the run passes it (``seed`` where it says ``sead``), or one with no room for
    the run's positional arguments. A class with its own ``from_context`` is checked by
    building it (the kits do)."""
    owner = f"{_KIND_WORDS.get(kind, kind)} '{name}'"
    raw: object = getattr(cls, "context_fields", frozenset())
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
    kind = call_kind(kind, cls)
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
    "call_kind",
    "construction_mistake",
    "declared_fields",
    "keyword_parameters",
    "overrides_hook",
    "run_call",
]

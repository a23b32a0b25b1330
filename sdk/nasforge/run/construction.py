"""The one place a run builds a plugin component: through its hook, from the run context.

:func:`build_component` checks the user's options against the component (one line naming
the option, never a traceback from inside a plugin), then builds it from the run's
:class:`~nasforge.kernel.run_context.RunContext` through its hook (the fields it declares
in ``context_fields``, or its own ``from_context``:
:func:`~nasforge.kernel.run_context.build_from_context`). What the constructor itself
then refuses is one line naming the component and the plugin it came from.

A component is handed only what it declares (or reads in its own ``from_context``):
never something because a constructor parameter happens to share a field's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from nasforge.kernel.context_fields import USER_MAY_SET, declared_fields, keyword_parameters, run_call
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.option_types import check_options, first_line
from nasforge.kernel.run_context import ContextError, RunContext, build_from_context

_T = TypeVar("_T")

#: Context fields a user option may set, by kind, beyond :data:`USER_MAY_SET`: an
#: evaluator's ``seed`` (it may be seeded apart from the search, as it always could).
KIND_MAY_SET: dict[str, frozenset[str]] = {"evaluator": frozenset({"seed"})}


def build_component(
    kind: str,
    cls: type[_T],
    context: RunContext,
    options: Mapping[str, Any],
    *args: Any,
    plugin: str | None = None,
    **fixed: Any,
) -> _T:
    """``cls`` built for a run through its hook
    (:func:`~nasforge.kernel.run_context.build_from_context`), ``args``, ``fixed`` and
    ``options`` passed on.

    ``kind`` names the component in messages (``strategy``, ``evaluator``, ``search
    space``, ``metric``, ``executor``); ``fixed`` are the keywords a run passes every
    component of the kind (a strategy's ``objective``, an evaluator's ``dataset``);
    ``options`` are the user's. An option naming a context field the component is built
    with is refused (the run supplies it), except those of
    :data:`~nasforge.kernel.run_context.USER_MAY_SET` (and :data:`KIND_MAY_SET`), where the
    option wins. ``plugin`` (the registering plugin's name) is named where construction fails.
    """
    name = getattr(cls, "name", getattr(cls, "__name__", repr(cls)))
    owner = f"{kind} '{name}'"
    options = dict(options)
    from_run = declared_fields(cls) - USER_MAY_SET - KIND_MAY_SET.get(kind, frozenset())
    supplied = sorted(from_run & set(options))
    if supplied:
        raise OptionError(f"{owner}: option '{supplied[0]}' is supplied by the run, not by an option")
    check_options(owner, cls, options, accepted=user_options(kind, cls, fixed))
    try:
        built: _T = build_from_context(kind, cls, context, *args, **fixed, **options)
        return built
    except OptionError as exc:
        message = str(exc)
        raise OptionError(message if message.startswith(owner) else f"{owner}: {message}") from exc
    except NasforgeError:
        raise
    except ValueError as exc:
        raise OptionError(f"{owner}: {first_line(exc)}") from exc
    except TypeError as exc:
        if options:
            raise OptionError(f"{owner}: {first_line(exc)}") from exc
        source = f" (plugin '{plugin}')" if plugin else ""
        raise ContextError(
            f"{owner}{source} cannot be built from the run context: {type(exc).__name__}: {first_line(exc)}"
        ) from exc


def user_options(kind: str, cls: Any, fixed: Mapping[str, Any] = {}) -> list[str] | None:  # noqa: B006
    """The options a user may set for ``cls``: its constructor's keywords, less what the run
    passes (``fixed``, its kind's keywords, the context fields it is built with, except
    those a user may set); None when its signature cannot be read (any option then)."""
    positional, keywords, fields = run_call(kind, cls)
    taken = keyword_parameters(cls, skip=positional)
    if taken is None:
        return None
    names, _ = taken
    run_only = (keywords | fields | set(fixed)) - USER_MAY_SET - KIND_MAY_SET.get(kind, frozenset())
    return [n for n in names if n not in run_only and n not in fixed]


def context_fields_of(kind: str, cls: Any) -> frozenset[str]:
    """The context fields a run gives ``cls`` beyond its kind's: those it declares."""
    return declared_fields(cls)


__all__ = [
    "KIND_MAY_SET",
    "build_component",
    "context_fields_of",
    "user_options",
]

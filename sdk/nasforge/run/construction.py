"""The one place a run builds a plugin component: through its hook, from the run context.

:func:`build_component` checks the user's options against the component (one line naming
the option, never a traceback from inside a plugin), then builds it from the run's
:class:`~nasforge.kernel.run_context.RunContext` through its hook (the fields it declares
in ``context_fields``, or its own ``from_context``:
:func:`~nasforge.kernel.run_context.build_from_context`). What the constructor itself
then refuses is one line naming the component and the plugin it came from.

A component written before the hook existed (it neither declares ``context_fields`` nor
defines ``from_context``) was handed what its constructor's parameter names asked for;
:func:`legacy_arguments` still does that, once per parameter with a
:class:`DeprecationWarning` naming it, until nasforge 0.3.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any

from nasforge.kernel.context_fields import (
    USER_MAY_SET,
    declared_fields,
    declares_hook,
    keyword_parameters,
    run_call,
)
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.option_types import check_options, first_line
from nasforge.kernel.run_context import ContextError, RunContext, build_from_context

#: The version that stops handing context fields to constructor parameters by name.
LEGACY_REMOVED_IN = "0.3"

#: Context fields a user option may set, by kind, beyond :data:`USER_MAY_SET`: an
#: evaluator's ``seed`` (it may be seeded apart from the search, as it always could).
KIND_MAY_SET: dict[str, frozenset[str]] = {"evaluator": frozenset({"seed"})}

#: What a run handed each kind of component by constructor parameter name before the hook.
LEGACY_FIELDS: dict[str, frozenset[str]] = {
    "search space": frozenset({"registry"}),
    "strategy": frozenset({"registry", "data", "build_options", "parallelism", "max_fidelity"}),
    "evaluator": frozenset({"registry", "seed", "data", "build_options", "device"}),
    "metric": frozenset({"registry"}),
    "executor": frozenset(),
}
#: What a run handed a one-shot strategy by constructor parameter name before the hook;
#: ``device`` it handed every one-shot strategy, as an option of its settings.
LEGACY_ONE_SHOT = frozenset({"registry", "build_options", "progress"})


def build_component(
    kind: str,
    cls: Any,
    context: RunContext,
    options: Mapping[str, Any],
    *args: Any,
    plugin: str | None = None,
    **fixed: Any,
) -> Any:
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
    legacy = legacy_arguments(kind, cls, context, options, fixed)
    from_run = (declared_fields(cls) | set(legacy)) - USER_MAY_SET - KIND_MAY_SET.get(kind, frozenset())
    supplied = sorted(from_run & set(options))
    if supplied:
        raise OptionError(f"{owner}: option '{supplied[0]}' is supplied by the run, not by an option")
    check_options(owner, cls, options, accepted=user_options(kind, cls, fixed))
    try:
        return build_from_context(kind, cls, context, *args, **fixed, **legacy, **options)
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
    legacy = _legacy_names(kind, cls)
    run_only = (keywords | fields | legacy | set(fixed)) - USER_MAY_SET - KIND_MAY_SET.get(kind, frozenset())
    return [n for n in names if n not in run_only and n not in fixed]


def context_fields_of(kind: str, cls: Any) -> frozenset[str]:
    """The context fields a run gives ``cls``: those it declares, or, written before the
    hook, those the run's adapter hands it (:func:`legacy_arguments`)."""
    return declared_fields(cls) | _legacy_names(kind, cls)


def _one_shot(cls: Any) -> bool:
    # imported here: the contract brings torch, and the executors (whose module imports
    # this one) are listed by the command line before anything runs
    from nasforge.kernel.one_shot import OneShotStrategy

    return isinstance(cls, type) and issubclass(cls, OneShotStrategy)


def _legacy_names(kind: str, cls: Any) -> set[str]:
    """The context fields a component written before the hook was handed: constructor
    parameters named like them (none for one that declares the hook)."""
    if declares_hook(cls) or not isinstance(cls, type):
        return set()
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return set()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    _, _, fields = run_call(kind, cls)
    wanted = (LEGACY_ONE_SHOT if _one_shot(cls) else LEGACY_FIELDS.get(kind, frozenset())) - fields
    found = {n for n, p in params.items() if n in wanted and p.kind in keyword}
    return found | ({"device"} - fields if _one_shot(cls) else set())


def legacy_arguments(
    kind: str, cls: Any, context: RunContext, options: Mapping[str, Any], fixed: Mapping[str, Any]
) -> dict[str, Any]:
    """The adapter for components written against the rule before the hook: each
    constructor parameter named like a field the run used to hand over by name gets it (where
    the run holds one, and no user option of that name is given), each with a
    :class:`DeprecationWarning` naming the parameter, attributed to the component's own
    module (so a plugin's test suite can make it an error)."""
    names = _legacy_names(kind, cls)
    if not names:
        return {}
    owner = f"{kind} '{getattr(cls, 'name', cls.__name__)}'"
    code = getattr(cls.__init__, "__code__", None)
    given = {
        n: getattr(context, n)
        for n in sorted(names)
        if context.holds(n) and n not in options and n not in fixed
    }
    for name in sorted(names):
        if name == "device" and name not in given:
            continue  # not a parameter it names: said only when it is handed one
        warnings.warn_explicit(
            f"{owner} takes '{name}' from the run by its constructor parameter's name, which stops in "
            f"nasforge {LEGACY_REMOVED_IN}: declare it, context_fields = {cls.__name__}.context_fields | "
            f"{{'{name}'}} (see nasforge.kernel.run_context)",
            DeprecationWarning,
            filename=code.co_filename if code is not None else "<unknown>",
            lineno=code.co_firstlineno if code is not None else 0,
            module=cls.__module__,
        )
    return given


__all__ = [
    "KIND_MAY_SET",
    "LEGACY_FIELDS",
    "LEGACY_ONE_SHOT",
    "LEGACY_REMOVED_IN",
    "build_component",
    "context_fields_of",
    "legacy_arguments",
    "user_options",
]

"""pluggy hook specifications: how plugins contribute components and observe runs.

Registration hooks return a list of classes (each with a ``name`` class attribute);
event hooks are called for loggers and callbacks and their return values are ignored,
except ``nasforge_should_stop``'s, which ends a run.

The two markers are pluggy's, typed so that a decorated function keeps its own signature
(pluggy's own ``__call__`` returns a union that would hide it from a type checker).
"""

# mypy: disable-error-code="empty-body"
# (a hook specification is a signature: pluggy reads it and never calls the body)

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, cast, overload

import pluggy

_F = TypeVar("_F", bound=Callable[..., Any])


class HookimplDecorator(Protocol):
    """``@hookimpl`` or ``@hookimpl(tryfirst=True, ...)``: marks a plugin's hook function."""

    project_name: str

    @overload
    def __call__(self, function: _F, /) -> _F: ...
    @overload
    def __call__(
        self,
        function: None = None,
        /,
        *,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> Callable[[_F], _F]: ...


class HookspecDecorator(Protocol):
    """``@hookspec`` or ``@hookspec(firstresult=True, ...)``: declares a hook."""

    project_name: str

    @overload
    def __call__(self, function: _F, /) -> _F: ...
    @overload
    def __call__(
        self,
        function: None = None,
        /,
        *,
        firstresult: bool = False,
        historic: bool = False,
        warn_on_impl: Warning | None = None,
        warn_on_impl_args: Mapping[str, Warning] | None = None,
    ) -> Callable[[_F], _F]: ...


PROJECT = "nasforge"
hookspec = cast(HookspecDecorator, pluggy.HookspecMarker(PROJECT))
hookimpl = cast(HookimplDecorator, pluggy.HookimplMarker(PROJECT))


@hookspec
def nasforge_register_search_spaces() -> list[type]:
    """Return SearchSpace subclasses."""


@hookspec
def nasforge_register_metrics() -> list[type]:
    """Return Metric subclasses."""


@hookspec
def nasforge_register_strategies() -> list[type]:
    """Return Strategy (ask/tell) or OneShotStrategy subclasses."""


@hookspec
def nasforge_register_evaluators() -> list[type]:
    """Return Evaluator subclasses."""


@hookspec
def nasforge_register_datasets() -> list[Any]:
    """Return DatasetSource objects (see :mod:`nasforge.kernel.datasets`)."""


@hookspec
def nasforge_register_executors() -> list[type]:
    """Return Executor subclasses."""


@hookspec
def nasforge_register_commands() -> list[Any]:
    """Return :class:`nasforge.kernel.plugin_command.PluginCommand` objects: CLI commands of the plugin."""


@hookspec
def nasforge_trial_end(experiment: Any, trial: Any) -> None:
    """Called after each trial is journaled."""


@hookspec(firstresult=True)
def nasforge_should_stop(experiment: Any, trial: Any) -> str | None:
    """Asked after each new trial of an ask/tell run is journaled: a reason (one line) to
    end the run now, or None to go on. The first reason returned stops it; the run then
    ends normally and its journal's end record keeps the reason. Stops decided here are
    not re-judged on resume (a resumed, unfinished run asks again from its next new
    trial); rules that must survive a resume belong in the spec (:mod:`nasforge.run.stop_rules`)."""


@hookspec
def nasforge_search_end(experiment: Any, outcome: Any) -> None:
    """Called once when a search finishes."""

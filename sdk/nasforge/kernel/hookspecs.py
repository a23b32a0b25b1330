"""pluggy hook specifications: how plugins contribute components and observe runs.

Registration hooks return a list of classes (each with a ``name`` class attribute);
event hooks are called for loggers and callbacks and their return values are ignored,
except ``nasforge_should_stop``'s, which ends a run.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "nasforge"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


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

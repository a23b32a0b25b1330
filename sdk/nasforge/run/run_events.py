"""A run's events as the run announces them: to the registry's plugins, to the hook objects a
host program gave this run, and to its callbacks.

A host program that embeds nasforge follows a run without making a plugin or a registry
of its own: ``api.search(..., on_trial=f, on_end=g, hooks=[obj])``. ``on_trial(trial)``
sees each new trial once, as it is journaled (never the trials a resume replays from the
journal); ``on_end(outcome)`` the outcome once, when the run ends (not when an ended run
is merely read again). ``hooks`` are objects with event hook implementations
(``@nasforge.hookimpl def nasforge_trial_end(self, experiment, trial)``, and
``nasforge_should_stop``, ``nasforge_search_end``), called after the registry's plugins'
for this run alone, so two runs in two threads never see each other's hooks.

A plugin's event hook that raises is caught, said once in a warning and recorded
(:mod:`nasforge.run.plugin_faults`): an installed plugin's bug never ends a run. A host
program's own hook objects and callbacks are its own code, and their errors reach it.

The start and the end of every run are logged at INFO under ``nasforge.run`` (a child of
the ``nasforge`` logger), each record marked with ``nasforge_event`` (``start``/``end``)
for a handler that wants only those (the command line, which prints its own, drops them).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from nasforge.kernel import hookspecs
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.registry import KINDS, Registry
from nasforge.kernel.result import Trial
from nasforge.run.plugin_faults import FaultLog, PluginFault

_T = TypeVar("_T")

if TYPE_CHECKING:  # the outcome holds an ensemble (torch); the command line's logging imports this
    from nasforge.kernel.outcome import SearchOutcome

#: The logger of a run's start and end records.
logger = logging.getLogger("nasforge.run")
#: The attribute of a start or end record saying which (``start``, ``end``).
EVENT_KEY = "nasforge_event"

TrialCallback = Callable[[Trial], None]
EndCallback = Callable[["SearchOutcome"], None]
#: The event hooks a run's own hook objects may implement.
EVENT_HOOKS = ("nasforge_trial_end", "nasforge_should_stop", "nasforge_search_end")


class RunEvents:
    """Where one run's events go: ``registry``'s plugins, then ``hooks`` (this run's own
    hook objects), then the callbacks. A hook object with a hook no spec knows (a
    misspelt name) or a registration hook is refused in one line before the run starts."""

    def __init__(
        self,
        registry: Registry,
        *,
        hooks: Iterable[object] = (),
        on_trial: TrialCallback | None = None,
        on_end: EndCallback | None = None,
    ) -> None:
        self.registry = registry
        self.on_trial, self.on_end = on_trial, on_end
        for name, callback in (("on_trial", on_trial), ("on_end", on_end)):
            if callback is not None and not callable(callback):
                raise NasforgeError(f"{name} must be callable, got {type(callback).__name__}")
        self._own = _own_hooks(list(hooks))
        self._faults = FaultLog()

    @property
    def plugin_faults(self) -> list[PluginFault]:
        """The registry's plugins whose event hooks raised in this run (each once)."""
        return self._faults.faults

    def _plugins_implement(self, hook: str) -> bool:
        return bool(getattr(self.registry.pm.hook, hook).get_hookimpls())

    def trial_end(self, experiment: Any, trial: Trial) -> None:
        """A new trial was journaled (replayed ones are not announced). Each of the plugins,
        the hook objects and ``on_trial`` is handed a copy of its own (:func:`handed`)."""
        if self._plugins_implement("nasforge_trial_end"):
            kwargs = {"experiment": experiment, "trial": handed(trial)}
            self._faults.call(self.registry.pm, "nasforge_trial_end", kwargs, trial=trial.index)
        if self._own is not None:
            self._own.hook.nasforge_trial_end(experiment=experiment, trial=handed(trial))
        if self.on_trial is not None:
            self.on_trial(handed(trial))

    def should_stop(self, experiment: Any, trial: Trial) -> str | None:
        """The first reason a plugin or hook object gives to end the run now, or None."""
        why = None
        if self._plugins_implement("nasforge_should_stop"):
            kwargs = {"experiment": experiment, "trial": handed(trial)}
            why = self._faults.call(
                self.registry.pm, "nasforge_should_stop", kwargs, trial=trial.index, first_result=True
            )
        if not why and self._own is not None:
            why = self._own.hook.nasforge_should_stop(experiment=experiment, trial=handed(trial))
        return str(why) if why else None

    def plugins_search_end(self, experiment: Any, outcome: SearchOutcome) -> None:
        """The registry's plugins hear that the run ended (each handed a copy of the
        outcome): called before the journal's end record is written, so that the record
        keeps any fault of theirs and no edit of theirs."""
        if not self._plugins_implement("nasforge_search_end"):
            return
        kwargs = {"experiment": experiment, "outcome": handed(outcome)}
        self._faults.call(self.registry.pm, "nasforge_search_end", kwargs)

    def search_end(self, experiment: Any, outcome: SearchOutcome) -> None:
        """The run ended (called once per run: not when an ended run is read again): this
        run's hook objects, then its ``on_end``; the plugins heard it in
        :meth:`plugins_search_end`."""
        if self._own is not None:
            self._own.hook.nasforge_search_end(experiment=experiment, outcome=outcome)
        if self.on_end is not None:
            self.on_end(outcome)


def _own_hooks(hooks: Sequence[object]) -> pluggy.PluginManager | None:
    """A plugin manager of this run's hook objects alone (None without any)."""
    if not hooks:
        return None
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registration = set(KINDS.values())
    for number, obj in enumerate(hooks):
        what = getattr(obj, "__name__", type(obj).__name__)
        if isinstance(obj, type):  # its methods would be called without an instance
            raise NasforgeError(f"hook object {what} is a class: pass an instance of it, {what}()")
        try:
            pm.register(obj, name=f"{what}#{number}")
        except (pluggy.PluginValidationError, ValueError) as exc:
            raise NasforgeError(f"hook object {what}: {_pluggy_reason(exc, what)}") from exc
        given = {caller.name for caller in pm.get_hookcallers(obj) or []}
        if not given:
            raise NasforgeError(
                f"hook object {what} implements no hook: decorate its methods with @nasforge.hookimpl "
                f"({', '.join(EVENT_HOOKS)})"
            )
        wrong = sorted(given & registration)
        if wrong:
            raise NasforgeError(
                f"hook object {what} implements {wrong[0]}: a run's hooks are event hooks "
                f"({', '.join(EVENT_HOOKS)}); register components with "
                "nasforge.kernel.registry.load_registry(extra_plugins=[...]) and pass that registry"
            )
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        known = ", ".join(EVENT_HOOKS)
        raise NasforgeError(f"hook object: {str(exc).splitlines()[0]} (known: {known})") from exc
    return pm


def _pluggy_reason(exc: Exception, what: str) -> str:
    """pluggy's whole reason (it spreads it over several lines) in one line, the object named
    as the user knows it rather than by the name it was registered under."""
    lines = [" ".join(line.split()) for line in str(exc).splitlines() if line.strip()]
    if len(lines) > 1 and re.match(r"Plugin '[^']*#\d+' for hook", lines[0]):
        lines = lines[1:]  # the hook is named in the definition that follows
    text = "; ".join(lines) or type(exc).__name__
    return re.sub(r"Plugin '[^']*#\d+'", what, text)


def handed(value: _T) -> _T:
    """What a hook or callback is handed: a copy of the run's own value, so that an edit
    to it cannot change the search (or leave a journal its resume disagrees with)."""
    return copy.deepcopy(value)


def log_start(what: str, **facts: Any) -> None:
    """The INFO record of a run's start: what runs, and the facts that identify it."""
    detail = ", ".join(f"{k} {v}" for k, v in facts.items() if v is not None)
    logger.info("search started: %s (%s)", what, detail, extra={EVENT_KEY: "start"})


def log_end(what: str, outcome: SearchOutcome, seconds: float, **facts: Any) -> None:
    """The INFO record of a run's end: its trials, its best and how long it took."""
    detail = ", ".join(f"{k} {v}" for k, v in facts.items() if v is not None)
    tail = f", {detail}" if detail else ""
    logger.info(
        "search ended: %s: %d trials, best %s in %.1f s%s",
        what,
        len(outcome.history),
        outcome.best,
        seconds,
        tail,
        extra={EVENT_KEY: "end"},
    )


__all__ = ["EVENT_HOOKS", "EVENT_KEY", "EndCallback", "RunEvents", "TrialCallback", "log_end", "log_start"]

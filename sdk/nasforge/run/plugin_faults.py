"""Event hooks called one plugin at a time, so that one plugin's bug cannot end a run.

A run announces its events (``nasforge_trial_end``, ``nasforge_should_stop``,
``nasforge_search_end``, and any event hook added later) to every installed plugin, also
to those whose components it does not use: a logger that raises would otherwise crash
every search on the machine. Each plugin's implementation is therefore called on its
own; one that raises is recorded as a :class:`PluginFault`, said once per run in one
warning line naming the plugin and the hook, and skipped for that call only (the run goes
on exactly as it would without the plugin). The run's faults go into its journal's end
record, ``inspect`` and ``--json``.

The order is pluggy's (last registered first, ``tryfirst``/``trylast`` honoured), and a
``firstresult`` hook stops at the first answer, as pluggy would. A hook wrapper is called
through pluggy with its plugin's other implementations, its failure isolated the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs
import pluggy

from nasforge.kernel.errors import first_line

logger = logging.getLogger("nasforge.run")

#: The journal end record's (and ``--json``'s) key of a run's plugin faults.
FAULTS_KEY = "plugin_faults"


@attrs.frozen
class PluginFault:
    """A plugin's event hook that raised during a run: the first error and how often."""

    plugin: str
    hook: str
    #: The first error, ``Type: first line``.
    error: str
    #: The trial being announced when it first raised (None: the end of the run).
    trial: int | None = None
    #: How many calls raised in the run.
    times: int = 1

    def line(self) -> str:
        """The fault in one line, as stderr and ``inspect`` show it."""
        where = f" at trial {self.trial}" if self.trial is not None else ""
        again = f" ({self.times} times)" if self.times > 1 else ""
        return (
            f"plugin '{self.plugin}': its {self.hook} hook raised {self.error}{where}{again}; "
            "the run went on without it"
        )

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PluginFault:
        trial = data.get("trial")
        times = data.get("times")
        return cls(
            plugin=str(data.get("plugin")),
            hook=str(data.get("hook")),
            error=str(data.get("error")),
            trial=trial if isinstance(trial, int) else None,
            times=times if isinstance(times, int) and times > 0 else 1,
        )


def recorded_faults(record: Mapping[str, Any] | None) -> list[PluginFault]:
    """The plugin faults an end record holds (none for runs without, or before they were kept)."""
    found = (record or {}).get(FAULTS_KEY)
    if not isinstance(found, list):
        return []
    return [PluginFault.from_json(f) for f in found if isinstance(f, Mapping)]


class FaultLog:
    """One run's plugin faults: each (plugin, hook) warned once, counted every time."""

    def __init__(self) -> None:
        self._faults: dict[tuple[str, str], PluginFault] = {}

    @property
    def faults(self) -> list[PluginFault]:
        """The run's faults, in the order they first happened."""
        return list(self._faults.values())

    def record(self, plugin: str, hook: str, exc: BaseException, trial: int | None) -> None:
        key = (plugin, hook)
        known = self._faults.get(key)
        if known is not None:
            self._faults[key] = attrs.evolve(known, times=known.times + 1)
            return
        fault = PluginFault(plugin, hook, f"{type(exc).__name__}: {first_line(exc)}", trial)
        self._faults[key] = fault
        logger.warning("%s", fault.line())
        logger.debug("plugin '%s' %s", plugin, hook, exc_info=exc)

    def call(
        self,
        pm: pluggy.PluginManager,
        hook: str,
        kwargs: dict[str, Any],
        *,
        trial: int | None = None,
        first_result: bool = False,
    ) -> Any:
        """``hook`` of every plugin of ``pm``, one plugin at a time; the first non-None answer
        when ``first_result``, else None. A plugin that raises is recorded and skipped."""
        impls = getattr(pm.hook, hook).get_hookimpls()
        wrapped = {i.plugin_name for i in impls if i.hookwrapper or i.wrapper}
        called: set[str] = set()
        for impl in reversed(impls):  # pluggy calls the last registered first
            plugin = impl.plugin_name
            if plugin in called:
                continue  # a plugin with a wrapper was called whole
            try:
                if plugin in wrapped:
                    called.add(plugin)
                    answer = _one_plugin(pm, hook, plugin)(**kwargs)
                else:
                    answer = impl.function(*[kwargs[name] for name in impl.argnames])
            except Exception as exc:  # a plugin's bug must not end the run
                self.record(plugin, hook, exc, trial)
                continue
            if first_result and answer is not None:
                return answer
        return None


def _one_plugin(pm: pluggy.PluginManager, hook: str, plugin: str) -> Any:
    """``hook`` of one plugin alone, called through pluggy (its wrappers around its others)."""
    others = [p for name, p in pm.list_name_plugin() if name != plugin and p is not None]
    return pm.subset_hook_caller(hook, remove_plugins=others)


__all__ = ["FAULTS_KEY", "FaultLog", "PluginFault", "recorded_faults"]

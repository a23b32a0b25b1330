"""Plugin discovery and the name -> component registry.

Every plugin, first-party or not, arrives through the entry-point group ``nasforge``.
Each entry point is loaded on its own so that one broken plugin is reported (``nasforge
plugins`` shows the error) and never stops the others from registering.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Iterable
from typing import Any

import attrs
import pluggy

from nasforge import hookspecs
from nasforge.errors import UnknownNameError

ENTRY_POINT_GROUP = "nasforge"

KINDS = {
    "space": "nasforge_register_search_spaces",
    "metric": "nasforge_register_metrics",
    "strategy": "nasforge_register_strategies",
    "evaluator": "nasforge_register_evaluators",
    "dataset": "nasforge_register_datasets",
    "executor": "nasforge_register_executors",
}


@attrs.frozen
class PluginInfo:
    """One entry point and what became of it."""

    name: str
    module: str
    distribution: str | None
    ok: bool
    error: str | None = None
    provides: tuple[str, ...] = ()


class Registry:
    """Components by kind and name, gathered from a pluggy plugin manager."""

    def __init__(self, pm: pluggy.PluginManager, plugins: Iterable[PluginInfo]) -> None:
        self.pm = pm
        self.plugins: list[PluginInfo] = list(plugins)
        self._components: dict[str, dict[str, Any]] = {}
        self.conflicts: list[str] = []
        for kind, hook_name in KINDS.items():
            table: dict[str, Any] = {}
            hook = getattr(pm.hook, hook_name)
            for impl in reversed(hook.get_hookimpls()):  # registration order
                for component in impl.function() or []:
                    cname = component.name
                    if cname in table and table[cname] is not component:
                        self.conflicts.append(f"{kind} '{cname}' registered twice; kept the first")
                        continue
                    table[cname] = component
            self._components[kind] = table

    def names(self, kind: str) -> list[str]:
        return sorted(self._components[kind])

    def get(self, kind: str, name: str) -> Any:
        """The component registered as ``name``; unknown names raise with a suggestion."""
        table = self._components[kind]
        if name not in table:
            raise UnknownNameError(_KIND_WORDS.get(kind, kind), name, table)
        return table[name]

    def items(self, kind: str) -> list[tuple[str, Any]]:
        return sorted(self._components[kind].items())

    # convenience constructors used by the CLI and the Python API
    def space(self, name: str, **options: Any) -> Any:
        return self.get("space", name)(**options)


_KIND_WORDS = {"space": "search space"}


def _distribution_of(ep: importlib.metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else None


def create_plugin_manager(
    *, entry_points: bool = True, extra_plugins: Iterable[Any] = ()
) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """A plugin manager with the core's built-ins, the entry points and any extras."""
    from nasforge import builtin_plugin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin_plugin, name="nasforge.builtin")
    infos: list[PluginInfo] = []
    if entry_points:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
            except Exception as exc:  # a broken plugin must not break the others
                infos.append(
                    PluginInfo(ep.name, ep.value, _distribution_of(ep), False, f"{type(exc).__name__}: {exc}")
                )
                continue
            infos.append(PluginInfo(ep.name, ep.value, _distribution_of(ep), True, None, _provides(plugin)))
    for plugin in extra_plugins:
        pm.register(plugin)
        infos.append(
            PluginInfo(pm.get_name(plugin) or repr(plugin), repr(plugin), None, True, None, _provides(plugin))
        )
    return pm, infos


def _provides(plugin: Any) -> tuple[str, ...]:
    out = []
    for kind, hook_name in KINDS.items():
        fn = getattr(plugin, hook_name, None)
        if fn is None:
            continue
        try:
            out.extend(f"{kind}:{c.name}" for c in fn() or [])
        except Exception as exc:  # reported, not raised: listing must always work
            out.append(f"{kind}:<error {exc}>")
    return tuple(out)


_default: Registry | None = None
_lock = threading.Lock()


def get_registry(*, refresh: bool = False) -> Registry:
    """The process-wide registry built from installed entry points (cached)."""
    global _default
    with _lock:
        if _default is None or refresh:
            pm, infos = create_plugin_manager()
            _default = Registry(pm, infos)
        return _default

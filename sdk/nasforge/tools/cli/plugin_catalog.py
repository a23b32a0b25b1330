"""What the command line needs of the plugins before it parses: their commands and their
executors (whose flags it rewrites and lists), gathered without building the registry.

Building the :class:`~nasforge.kernel.registry.Registry` calls every registration hook,
which imports every space, strategy and metric, and with them torch: seconds before
``nasforge --help`` could print a line. The catalog loads the same plugins the same way
(entry points, ``NASFORGE_PLUGINS``, less ``NASFORGE_DISABLE_PLUGINS``) but calls only the
command and executor hooks. A hook that raises is left out here; the registry, built
when a command runs, reports it (``nasforge plugins``) and mounts what it accepts.
"""

from __future__ import annotations

import os
from typing import Any

from nasforge.kernel.registry import DISABLE_ENV, KINDS, create_plugin_manager

#: The kinds the command line reads before it parses.
CATALOG_KINDS = ("command", "executor")


class PluginCatalog:
    """Components of :data:`CATALOG_KINDS` by name, first registered kept (as the registry
    keeps them); it answers the few calls the command line's parsing makes of a registry."""

    def __init__(self, found: dict[str, dict[str, tuple[str, Any]]]) -> None:
        self._found = found
        #: Clashes noticed while mounting (a plugin command named like a core command).
        self.conflicts: list[str] = []

    def items(self, kind: str) -> list[tuple[str, Any]]:
        return sorted((name, component) for name, (_, component) in self._found.get(kind, {}).items())

    def origin(self, kind: str, name: str) -> str:
        return self._found[kind][name][0]


def load_catalog() -> PluginCatalog:
    """The installed plugins' commands and executors, without importing their components."""
    disabled = [n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()]
    pm, _infos = create_plugin_manager(disabled=disabled)
    found: dict[str, dict[str, tuple[str, Any]]] = {}
    for kind in CATALOG_KINDS:
        table = found.setdefault(kind, {})
        for impl in getattr(pm.hook, KINDS[kind]).get_hookimpls():  # registration order
            try:
                components = list(impl.function() or [])
            except Exception:  # reported by the registry when a command runs
                continue
            for component in components:
                name = getattr(component, "name", None)
                if isinstance(name, str) and name:
                    table.setdefault(name, (impl.plugin_name, component))
    return PluginCatalog(found)

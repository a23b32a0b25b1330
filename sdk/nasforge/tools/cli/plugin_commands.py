"""Mount the commands plugins register (``nasforge_register_commands``) on the CLI.

The core has no command for any plugin: ``nasforge darts-compare`` exists because the
DARTS plugin registers it, and disappears when the plugin is uninstalled or fails to load. A plugin
command may not replace a core command; such a clash is reported by ``nasforge plugins``.
"""

from __future__ import annotations

from typing import Any

import typer

from nasforge.kernel.plugin_command import PluginCommand
from nasforge.kernel.registry import Registry


def mount_plugin_commands(app: typer.Typer, registry: Registry) -> list[str]:
    """Add every registered plugin command to ``app``; returns the names mounted."""
    taken = {
        info.name or info.callback.__name__.replace("_", "-"): info.callback
        for info in app.registered_commands
        if info.callback is not None
    }
    mounted = []
    for name, command in registry.items("command"):
        if taken.get(name) is command.callback:  # mounted by an earlier call in this process
            continue
        if name in taken:
            registry.conflicts.append(
                f"command '{name}' of plugin '{registry.origin('command', name)}' is a core command; ignored"
            )
            continue
        app.command(name, help=command.help)(command.callback)
        mounted.append(name)
    return mounted


def plugin_click_command(name: str, command: PluginCommand) -> Any:
    """``command`` as the Click command :func:`mount_plugin_commands` would mount, for a
    group made apart from the application (the command line's first parse)."""
    single = typer.Typer()
    single.command(name, help=command.help)(command.callback)
    return typer.main.get_command(single)

"""nasforge entry point ``insight``: the ``nasforge insight`` command (Shu's thesis, ch. 4)."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge.kernel.plugin_command import PluginCommand


@hookimpl
def nasforge_register_commands() -> list[PluginCommand]:
    from nasforge_insight.insight_cmd import insight  # the command's imports load only when the CLI asks

    return [PluginCommand("insight", insight)]

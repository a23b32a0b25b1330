"""pluggy entry point (``hnas = "nasforge_hnas.plugin"``): the ``hnas`` strategy and the
``nasforge hnas`` command. Its evaluator where no tabular benchmark exists,
``short-train``, is the core's."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge.kernel.plugin_command import PluginCommand


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_hnas.strategy import Hnas

    return [Hnas]


@hookimpl
def nasforge_register_commands() -> list[PluginCommand]:
    from nasforge_hnas.cli import hnas  # the command's imports load only when the CLI asks

    return [PluginCommand("hnas", hnas)]

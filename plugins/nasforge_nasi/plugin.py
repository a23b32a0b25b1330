"""pluggy entry point (``nasi = "nasforge_nasi.plugin"``): registers the ``nasi`` strategy.

Components are imported inside the hooks: the command line loads this module to find
the plugins' commands, and must not pay for torch to print ``--help``.
"""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_nasi.strategy import Nasi

    return [Nasi]

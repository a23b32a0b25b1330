"""pluggy entry point (``nasi = "nasforge_nasi.plugin"``): registers the ``nasi`` strategy."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge_nasi.strategy import Nasi


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return [Nasi]

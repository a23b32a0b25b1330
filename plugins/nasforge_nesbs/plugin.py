"""pluggy entry point (``nesbs = "nasforge_nesbs.plugin"``): registers the ``nesbs`` strategy."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge_nesbs.strategy import Nesbs


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return [Nesbs]

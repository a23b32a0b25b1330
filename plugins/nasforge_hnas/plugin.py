"""pluggy entry point (``hnas = "nasforge_hnas.plugin"``): the ``hnas`` strategy
(``nasforge search --strategy hnas``). Its evaluator where no tabular benchmark exists,
``short-train``, is the core's."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_hnas.strategy import Hnas

    return [Hnas]

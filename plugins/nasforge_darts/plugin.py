"""nasforge entry point ``darts``: the DARTS space and the DARTS / PR-DARTS strategies."""

from __future__ import annotations

from nasforge.hookspecs import hookimpl


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    from nasforge_darts.space import DartsSpace

    return [DartsSpace]


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_darts.darts_strategy import DartsStrategy
    from nasforge_darts.prdarts_strategy import PRDartsStrategy

    return [DartsStrategy, PRDartsStrategy]

"""nasforge entry point ``simplex``: the ``act-mlp`` space and the ``simplex`` strategy."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    from nasforge_simplex.act_mlp_space import ActMlpSpace

    return [ActMlpSpace]


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_simplex.strategy import SimplexSearch

    return [SimplexSearch]

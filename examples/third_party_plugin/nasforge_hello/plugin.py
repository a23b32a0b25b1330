"""Hook implementations: what this plugin contributes to nasforge."""

from __future__ import annotations

from nasforge import hookimpl
from nasforge_hello.cell_space import HelloCellSpace
from nasforge_hello.hill_climb import HillClimb
from nasforge_hello.weight_norm import WeightNorm


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return [HillClimb]


@hookimpl
def nasforge_register_metrics() -> list[type]:
    return [WeightNorm]


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    return [HelloCellSpace]

"""Entry point of the Optuna plugin: registers its strategies without importing Optuna."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge_optuna.strategy import STRATEGIES


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return list(STRATEGIES)

"""nasforge entry point ``darts``: the DARTS space, the NASNet-space cells
(``nasnet-cells``), the DARTS / PR-DARTS strategies, the ``darts-train`` evaluator
(DARTS's evaluation training inside a search) and the ``nasforge darts-compare`` and
``nasforge darts-train`` commands."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge.kernel.plugin_command import PluginCommand


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    from nasforge_darts.nasnet_cells import NasnetCellsSpace
    from nasforge_darts.space import DartsSpace

    return [DartsSpace, NasnetCellsSpace]


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_darts.darts_strategy import DartsStrategy
    from nasforge_darts.prdarts_strategy import PRDartsStrategy

    return [DartsStrategy, PRDartsStrategy]


@hookimpl
def nasforge_register_evaluators() -> list[type]:
    from nasforge_darts.train_evaluator import DartsTrainEvaluator

    return [DartsTrainEvaluator]


@hookimpl
def nasforge_register_commands() -> list[PluginCommand]:
    from nasforge_darts.compare_cmd import darts_compare  # the command's imports load only when the CLI asks
    from nasforge_darts.train_cmd import darts_train

    return [PluginCommand("darts-compare", darts_compare), PluginCommand("darts-train", darts_train)]

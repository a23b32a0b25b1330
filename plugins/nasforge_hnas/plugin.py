"""pluggy entry point (``hnas = "nasforge_hnas.plugin"``): the ``hnas`` strategy and the
``short-train`` evaluator it uses where no tabular benchmark exists."""

from __future__ import annotations

from nasforge.hookspecs import hookimpl
from nasforge_hnas.short_train import ShortTrainEvaluator
from nasforge_hnas.strategy import Hnas


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return [Hnas]


@hookimpl
def nasforge_register_evaluators() -> list[type]:
    return [ShortTrainEvaluator]

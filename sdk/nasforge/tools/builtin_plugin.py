"""The core's own contributions, registered like any plugin: datasets, executors, the
``short-train`` evaluator, and the toy space/evaluator (instant demos and the
conformance kit's default space)."""

from __future__ import annotations

from nasforge.kernel.datasets import BUILTIN_DATASETS
from nasforge.kernel.hookspecs import hookimpl
from nasforge.kernel.testing.toy import ToyEvaluator, ToyFidelityEvaluator, ToySpace
from nasforge.run.executors import InProcessExecutor, ProcessPoolExecutor
from nasforge.tools.short_train import ShortTrainEvaluator


@hookimpl
def nasforge_register_datasets() -> list:
    return list(BUILTIN_DATASETS)


@hookimpl
def nasforge_register_executors() -> list:
    return [InProcessExecutor, ProcessPoolExecutor]


@hookimpl
def nasforge_register_search_spaces() -> list:
    return [ToySpace]


@hookimpl
def nasforge_register_evaluators() -> list:
    return [ToyEvaluator, ToyFidelityEvaluator, ShortTrainEvaluator]

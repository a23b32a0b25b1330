"""The core's own contributions, registered like any plugin: datasets, executors and the
``short-train`` evaluator. (The toy space of the conformance kits is no component a user
searches: tests and demos load it as a plugin module, ``NASFORGE_PLUGINS=nasforge.kernel.testing.toy``.)"""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_datasets() -> list:
    from nasforge.run.builtin_datasets import BUILTIN_DATASETS

    return list(BUILTIN_DATASETS)


@hookimpl
def nasforge_register_executors() -> list:
    from nasforge.run.executors import InProcessExecutor, ProcessPoolExecutor

    return [InProcessExecutor, ProcessPoolExecutor]


@hookimpl
def nasforge_register_evaluators() -> list:
    from nasforge.tools.short_train import ShortTrainEvaluator

    return [ShortTrainEvaluator]

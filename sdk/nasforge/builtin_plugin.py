"""The core's own contributions, registered like any plugin: datasets and executors."""

from __future__ import annotations

from nasforge.datasets import BUILTIN_DATASETS
from nasforge.executors import InProcessExecutor, ProcessPoolExecutor
from nasforge.hookspecs import hookimpl


@hookimpl
def nasforge_register_datasets() -> list:
    return list(BUILTIN_DATASETS)


@hookimpl
def nasforge_register_executors() -> list:
    return [InProcessExecutor, ProcessPoolExecutor]

"""nasforge: a plugin-based neural architecture search SDK for PyTorch.

The names re-exported here are the stable public API.
"""

from nasforge.budget import Budget
from nasforge.datasets import DatasetSource, TensorData
from nasforge.errors import (
    BudgetError,
    CapabilityError,
    ExportError,
    InvalidGenotypeError,
    JournalError,
    MissingDependencyError,
    NasforgeError,
    UnknownNameError,
)
from nasforge.evaluator import Evaluator
from nasforge.executors import Executor, InProcessExecutor, ProcessPoolExecutor
from nasforge.genotype import Genotype
from nasforge.hookspecs import hookimpl
from nasforge.metric import Batch, Metric, MetricContext, MetricInfo, PopulationMetric
from nasforge.registry import Registry, get_registry
from nasforge.result import Objective, Result, SearchOutcome, Trial
from nasforge.search_space import SearchSpace
from nasforge.strategy import OneShotStrategy, Strategy
from nasforge.supernet import Supernet

__version__ = "0.1.0"

__all__ = [
    "Batch",
    "Budget",
    "BudgetError",
    "CapabilityError",
    "DatasetSource",
    "Evaluator",
    "Executor",
    "ExportError",
    "Genotype",
    "InProcessExecutor",
    "InvalidGenotypeError",
    "JournalError",
    "Metric",
    "MetricContext",
    "MetricInfo",
    "MissingDependencyError",
    "NasforgeError",
    "Objective",
    "OneShotStrategy",
    "PopulationMetric",
    "ProcessPoolExecutor",
    "Registry",
    "Result",
    "SearchOutcome",
    "SearchSpace",
    "Strategy",
    "Supernet",
    "TensorData",
    "Trial",
    "UnknownNameError",
    "get_registry",
    "hookimpl",
    "__version__",
]

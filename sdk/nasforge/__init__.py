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

#: The core's public API beyond the names above: the submodules plugins and embedders may
#: import (documented in CONTRIBUTING.md). Everything else is internal and may change.
PUBLIC_MODULES = (
    "nasforge.api",
    "nasforge.atomic_files",
    "nasforge.backends",
    "nasforge.budget",
    "nasforge.cli.common_options",
    "nasforge.cli.options",
    "nasforge.cli.output",
    "nasforge.datasets",
    "nasforge.defaults",
    "nasforge.errors",
    "nasforge.evaluator",
    "nasforge.executors",
    "nasforge.experiment",
    "nasforge.export",
    "nasforge.genotype",
    "nasforge.hookspecs",
    "nasforge.metric",
    "nasforge.optional",
    "nasforge.plugin_command",
    "nasforge.registry",
    "nasforge.result",
    "nasforge.scoring",
    "nasforge.search_space",
    "nasforge.spec",
    "nasforge.strategy",
    "nasforge.supernet",
    "nasforge.testing",
    "nasforge.testing.conformance",
    "nasforge.training",
)

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
    "PUBLIC_MODULES",
]

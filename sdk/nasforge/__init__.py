"""nasforge: a plugin-based neural architecture search SDK for PyTorch.

The names re-exported here are the stable public API.

Status messages go to :mod:`logging` under the ``nasforge`` logger (``nasforge.experiment``,
``nasforge.nb201``, ...). A library only emits records; the application decides where they
go, so the package adds nothing but a :class:`logging.NullHandler` and a program that
configures no logging sees no output from it. The ``nasforge`` command installs its own
handler (:mod:`nasforge.cli.log_output`).
"""

import logging

from nasforge.budget import Budget
from nasforge.datasets import DatasetSource, TensorData
from nasforge.ensemble import Ensemble
from nasforge.errors import (
    BudgetError,
    CapabilityError,
    ExportError,
    InfeasibleSearchError,
    InvalidGenotypeError,
    JournalError,
    MissingDependencyError,
    NasforgeError,
    RunInUseError,
    RunLockError,
    SearchFailedError,
    UnknownNameError,
)
from nasforge.evaluator import Evaluator
from nasforge.executors import Executor, InProcessExecutor, ProcessPoolExecutor
from nasforge.fidelity import Proposal
from nasforge.genotype import Genotype
from nasforge.hookspecs import hookimpl
from nasforge.metric import Batch, Metric, MetricContext, MetricInfo, PopulationMetric
from nasforge.objectives import Constraint, SearchGoal
from nasforge.registry import Registry, get_registry
from nasforge.result import Objective, Result, SearchOutcome, Trial
from nasforge.search_space import SearchSpace
from nasforge.stopping import AllOf, Plateau, TargetReached, TimeLimit
from nasforge.strategy import OneShotStrategy, Strategy
from nasforge.supernet import Supernet, SupernetMixin, as_supernet, supernet_option_names
from nasforge.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge, OpSet, TopKInputs

__version__ = "0.1.0"

logging.getLogger("nasforge").addHandler(logging.NullHandler())

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
    "nasforge.ensemble",
    "nasforge.errors",
    "nasforge.evaluator",
    "nasforge.executors",
    "nasforge.experiment",
    "nasforge.fidelity",
    "nasforge.export",
    "nasforge.export.ensemble_export",
    "nasforge.genotype",
    "nasforge.hookspecs",
    "nasforge.journal",
    "nasforge.latency_cache",
    "nasforge.latency_objective",
    "nasforge.metric",
    "nasforge.objectives",
    "nasforge.option_types",
    "nasforge.optional",
    "nasforge.pareto",
    "nasforge.plot_files",
    "nasforge.plugin_command",
    "nasforge.progress_log",
    "nasforge.registry",
    "nasforge.result",
    "nasforge.run_lock",
    "nasforge.scoring",
    "nasforge.search_space",
    "nasforge.seeding",
    "nasforge.spec",
    "nasforge.stopping",
    "nasforge.strategy",
    "nasforge.supernet",
    "nasforge.supernet_discretise",
    "nasforge.supernet_topology",
    "nasforge.testing",
    "nasforge.testing.conformance",
    "nasforge.testing.supernet_conformance",
    "nasforge.training",
)

__all__ = [
    "Batch",
    "Budget",
    "BudgetError",
    "CapabilityError",
    "CellTopology",
    "Constraint",
    "DatasetSource",
    "AllOf",
    "Ensemble",
    "Evaluator",
    "Executor",
    "ExportError",
    "Genotype",
    "InProcessExecutor",
    "InfeasibleSearchError",
    "InvalidGenotypeError",
    "JournalError",
    "KeptEdge",
    "Metric",
    "MetricContext",
    "MetricInfo",
    "MissingDependencyError",
    "NasforgeError",
    "Objective",
    "OneOpPerEdge",
    "OneShotStrategy",
    "OpSet",
    "Plateau",
    "PopulationMetric",
    "ProcessPoolExecutor",
    "Registry",
    "Proposal",
    "Result",
    "RunInUseError",
    "RunLockError",
    "SearchFailedError",
    "SearchGoal",
    "SearchOutcome",
    "SearchSpace",
    "Strategy",
    "Supernet",
    "SupernetMixin",
    "TargetReached",
    "TensorData",
    "TimeLimit",
    "TopKInputs",
    "Trial",
    "UnknownNameError",
    "as_supernet",
    "get_registry",
    "hookimpl",
    "supernet_option_names",
    "__version__",
    "PUBLIC_MODULES",
]

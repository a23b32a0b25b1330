"""The public names of :mod:`nasforge` and the module that defines each.

``import nasforge`` stays cheap (no torch) by loading each name on first use from this
table; type checkers see the same names with their real types through the imports below,
which ``nasforge/__init__.py`` star-imports under ``TYPE_CHECKING`` only: so to mypy or an
editor ``nasforge.Strategy`` is the class and a misspelt name is an error. A test keeps the
table and the imports equal.
"""

import typing as _typing

#: Public name -> the module that defines it.
_EXPORTS = {
    name: f"nasforge.{module}"
    for module, names in {
        "run.budget": "Budget",
        "kernel.datasets": "DatasetSource TensorData",
        "kernel.declared_chooser": "Chooser",
        "kernel.declared_choices": "DeclarationError",
        "kernel.declared_space": "DeclaredSpace declared_space",
        "kernel.ensemble": "Ensemble",
        "kernel.errors": "BudgetError CapabilityError ExportError InfeasibleSearchError JournalError "
        "InvalidGenotypeError MissingDependencyError NasforgeError RunInUseError RunLockError "
        "SearchFailedError UnknownNameError",
        "kernel.evaluator": "Evaluator",
        "run.executors": "Executor InProcessExecutor ProcessPoolExecutor",
        "kernel.fidelity": "Proposal",
        "kernel.genotype": "Genotype",
        "kernel.hookspecs": "hookimpl",
        "kernel.metric": "Batch Metric MetricContext MetricInfo PopulationMetric",
        "kernel.objectives": "Constraint SearchGoal",
        "kernel.registry": "Registry get_registry",
        "kernel.result": "Objective Result Trial",
        "kernel.run_context": "RunContext",
        "kernel.outcome": "SearchOutcome",
        "kernel.search_space": "SearchSpace",
        "run.stop_rules": "AllOf Plateau TargetReached TimeLimit",
        "kernel.strategy": "Strategy",
        "kernel.one_shot": "OneShotStrategy",
        "kernel.supernet": "Supernet SupernetMixin as_supernet supernet_option_names",
        "kernel.supernet_topology": "CellTopology KeptEdge OneOpPerEdge OpSet TopKInputs",
        "kernel.public": "PUBLIC_MODULES",
    }.items()
    for name in names.split()
}

if _typing.TYPE_CHECKING:
    from nasforge.kernel.datasets import DatasetSource as DatasetSource
    from nasforge.kernel.datasets import TensorData as TensorData
    from nasforge.kernel.declared_choices import DeclarationError as DeclarationError
    from nasforge.kernel.declared_chooser import Chooser as Chooser
    from nasforge.kernel.declared_space import DeclaredSpace as DeclaredSpace
    from nasforge.kernel.declared_space import declared_space as declared_space
    from nasforge.kernel.ensemble import Ensemble as Ensemble
    from nasforge.kernel.errors import BudgetError as BudgetError
    from nasforge.kernel.errors import CapabilityError as CapabilityError
    from nasforge.kernel.errors import ExportError as ExportError
    from nasforge.kernel.errors import InfeasibleSearchError as InfeasibleSearchError
    from nasforge.kernel.errors import InvalidGenotypeError as InvalidGenotypeError
    from nasforge.kernel.errors import JournalError as JournalError
    from nasforge.kernel.errors import MissingDependencyError as MissingDependencyError
    from nasforge.kernel.errors import NasforgeError as NasforgeError
    from nasforge.kernel.errors import RunInUseError as RunInUseError
    from nasforge.kernel.errors import RunLockError as RunLockError
    from nasforge.kernel.errors import SearchFailedError as SearchFailedError
    from nasforge.kernel.errors import UnknownNameError as UnknownNameError
    from nasforge.kernel.evaluator import Evaluator as Evaluator
    from nasforge.kernel.fidelity import Proposal as Proposal
    from nasforge.kernel.genotype import Genotype as Genotype
    from nasforge.kernel.hookspecs import hookimpl as hookimpl
    from nasforge.kernel.metric import Batch as Batch
    from nasforge.kernel.metric import Metric as Metric
    from nasforge.kernel.metric import MetricContext as MetricContext
    from nasforge.kernel.metric import MetricInfo as MetricInfo
    from nasforge.kernel.metric import PopulationMetric as PopulationMetric
    from nasforge.kernel.objectives import Constraint as Constraint
    from nasforge.kernel.objectives import SearchGoal as SearchGoal
    from nasforge.kernel.one_shot import OneShotStrategy as OneShotStrategy
    from nasforge.kernel.outcome import SearchOutcome as SearchOutcome
    from nasforge.kernel.public import PUBLIC_MODULES as PUBLIC_MODULES
    from nasforge.kernel.registry import Registry as Registry
    from nasforge.kernel.registry import get_registry as get_registry
    from nasforge.kernel.result import Objective as Objective
    from nasforge.kernel.result import Result as Result
    from nasforge.kernel.result import Trial as Trial
    from nasforge.kernel.run_context import RunContext as RunContext
    from nasforge.kernel.search_space import SearchSpace as SearchSpace
    from nasforge.kernel.strategy import Strategy as Strategy
    from nasforge.kernel.supernet import Supernet as Supernet
    from nasforge.kernel.supernet import SupernetMixin as SupernetMixin
    from nasforge.kernel.supernet import as_supernet as as_supernet
    from nasforge.kernel.supernet import supernet_option_names as supernet_option_names
    from nasforge.kernel.supernet_topology import CellTopology as CellTopology
    from nasforge.kernel.supernet_topology import KeptEdge as KeptEdge
    from nasforge.kernel.supernet_topology import OneOpPerEdge as OneOpPerEdge
    from nasforge.kernel.supernet_topology import OpSet as OpSet
    from nasforge.kernel.supernet_topology import TopKInputs as TopKInputs
    from nasforge.run.budget import Budget as Budget
    from nasforge.run.executors import Executor as Executor
    from nasforge.run.executors import InProcessExecutor as InProcessExecutor
    from nasforge.run.executors import ProcessPoolExecutor as ProcessPoolExecutor
    from nasforge.run.stop_rules import AllOf as AllOf
    from nasforge.run.stop_rules import Plateau as Plateau
    from nasforge.run.stop_rules import TargetReached as TargetReached
    from nasforge.run.stop_rules import TimeLimit as TimeLimit

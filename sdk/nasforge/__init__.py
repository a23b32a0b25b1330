"""nasforge: a plugin-based neural architecture search SDK for PyTorch.

The core is three packages, each importing only the ones before it: ``nasforge.kernel``
(the contracts and values plugins implement and use), ``nasforge.run`` (what runs a
search) and ``nasforge.tools`` (scoring, export, reports, the CLI). The names below are the
stable API, loaded on first use so that ``import nasforge`` stays cheap.

Status messages go to :mod:`logging` under the ``nasforge`` logger; a library only emits
records, so the package adds nothing but a :class:`logging.NullHandler`.
"""

import importlib
import importlib.abc
import logging
import sys
from typing import Any

from nasforge._moved_map import MOVED_TO, RENAMED

__version__ = "0.1.0"

_K, _R = "nasforge.kernel.", "nasforge.run."
_ERRORS = (
    "BudgetError CapabilityError ExportError InfeasibleSearchError InvalidGenotypeError JournalError "
    "MissingDependencyError NasforgeError RunInUseError RunLockError SearchFailedError UnknownNameError"
)
#: Public name -> the module that defines it.
_EXPORTS = {
    **dict.fromkeys(("Budget",), _R + "budget"),
    **dict.fromkeys(("DatasetSource", "TensorData"), _K + "datasets"),
    **dict.fromkeys(("Ensemble",), _K + "ensemble"),
    **dict.fromkeys(_ERRORS.split(), _K + "errors"),
    **dict.fromkeys(("Evaluator",), _K + "evaluator"),
    **dict.fromkeys(("Executor", "InProcessExecutor", "ProcessPoolExecutor"), _R + "executors"),
    **dict.fromkeys(("Proposal",), _K + "fidelity"),
    **dict.fromkeys(("Genotype",), _K + "genotype"),
    **dict.fromkeys(("hookimpl",), _K + "hookspecs"),
    **dict.fromkeys(("Batch", "Metric", "MetricContext", "MetricInfo", "PopulationMetric"), _K + "metric"),
    **dict.fromkeys(("Constraint", "SearchGoal"), _K + "objectives"),
    **dict.fromkeys(("Registry", "get_registry"), _K + "registry"),
    **dict.fromkeys(("Objective", "Result", "Trial"), _K + "result"),
    **dict.fromkeys(("RunContext",), _K + "run_context"),
    **dict.fromkeys(("SearchOutcome",), _K + "outcome"),
    **dict.fromkeys(("SearchSpace",), _K + "search_space"),
    **dict.fromkeys(("AllOf", "Plateau", "TargetReached", "TimeLimit"), _R + "stop_rules"),
    **dict.fromkeys(("Strategy",), _K + "strategy"),
    **dict.fromkeys(("OneShotStrategy",), _K + "one_shot"),
    **dict.fromkeys(("Supernet", "SupernetMixin", "as_supernet", "supernet_option_names"), _K + "supernet"),
    **dict.fromkeys(
        ("CellTopology", "KeptEdge", "OneOpPerEdge", "OpSet", "TopKInputs"), _K + "supernet_topology"
    ),
    **dict.fromkeys(("PUBLIC_MODULES",), _K + "public"),
}

__all__ = sorted((*_EXPORTS, "__version__"))

logging.getLogger("nasforge").addHandler(logging.NullHandler())

_OLD_PATHS = frozenset({*(f"nasforge.{n}" for n in " ".join(MOVED_TO.values()).split()), *RENAMED})


class _OldPaths(importlib.abc.MetaPathFinder):
    """Finds a module by its path before it moved (until 0.3); the loader loads only then."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        parts = name.split(".")  # an old path is two parts (nasforge.strategy) or three (renamed)
        if parts[0] == "nasforge" and not {".".join(parts[:2]), ".".join(parts[:3])}.isdisjoint(_OLD_PATHS):
            from nasforge import _moved

            return _moved.spec_of(name)
        return None


if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldPaths())  # before the path finder: a package alias must not load twice


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'nasforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

"""Old module paths, kept importable while code that names them moves to the new ones.

The core is three packages (``nasforge.kernel``, ``nasforge.run``, ``nasforge.tools``); a
module that used to sit directly under ``nasforge`` (``nasforge.strategy``) is found here
and answered with the module at its new place (``nasforge.kernel.strategy``), the very
same module object, so classes compare equal whichever path imported them. Importing an
old path warns once with a :class:`DeprecationWarning` naming the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

from nasforge._moved_map import MOVED_TO

#: Old top-level module -> its new place (submodules follow their package).
MOVED = {f"nasforge.{n}": f"nasforge.{layer}.{n}" for layer, names in MOVED_TO.items() for n in names.split()}
MOVED["nasforge.atomic_files"] = "nasforge.kernel.files"


def new_name(old: str) -> str | None:
    """Where module ``old`` lives now, or None when it never moved."""
    head, dot, rest = old, "", ""
    while head not in MOVED:
        head, dot, tail = head.rpartition(".")
        if not dot:
            return None
        rest = f"{tail}.{rest}" if rest else tail
    return MOVED[head] + (f".{rest}" if rest else "")


class _Alias(importlib.abc.Loader):
    """Answers an old path with the module at the new one (see the module's docstring)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        target = new_name(module.__name__)
        assert target is not None
        warnings.warn(
            f"{module.__name__} is now {target}; import it from there", DeprecationWarning, stacklevel=2
        )
        sys.modules[module.__name__] = importlib.import_module(target)


def spec_of(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec that imports old path ``name`` as its new module (None: not a moved path)."""
    return importlib.machinery.ModuleSpec(name, _Alias()) if new_name(name) is not None else None


#: Names a kernel module held before the split, by their new module (space-separated).
_NAMES_MOVED: dict[str, dict[str, str]] = {
    "nasforge.kernel.datasets": {
        "nasforge.run.builtin_datasets": "load_digits load_gaussian with_random_labels load_digits_random_labels "
        "BUILTIN_DATASETS"
    },
    "nasforge.kernel.ensemble": {
        "nasforge.run.ensemble_training": "MemberRecipe EpochCallback train_network train_members "
        "predict_probabilities ensemble_scores_of_results evaluate_members"
    },
    "nasforge.kernel.fidelity": {
        "nasforge.run.fidelity_spent": "fidelity_spent trial_spent budget_trained varies_budget "
        "was_stopped at_full"
    },
    "nasforge.kernel.objectives": {
        "nasforge.run.goal_checks": "goal_of_header declared_objectives check_declared check_measured"
    },
    "nasforge.kernel.result": {"nasforge.kernel.outcome": "SearchOutcome"},
    "nasforge.kernel.search_space": {"nasforge.kernel.network_factory": "build_network network_factory"},
    "nasforge.kernel.strategy": {"nasforge.kernel.one_shot": "OneShotStrategy"},
}


def moved_attribute(module: str, name: str) -> Any:
    """``module.name`` for a name ``module`` held before the split, found where it went with
    a :class:`DeprecationWarning`; an AttributeError for any other name."""
    for target, text in _NAMES_MOVED.get(module, {}).items():
        if name in text.split():
            warnings.warn(f"{module}.{name} is now {target}.{name}", DeprecationWarning, stacklevel=3)
            return getattr(importlib.import_module(target), name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")

"""Old module paths and names, kept importable until nasforge 0.3 removes them.

Two moves left old paths behind: the split of the core into three packages
(``nasforge.kernel``, ``nasforge.run``, ``nasforge.tools``: ``nasforge.strategy`` is now
``nasforge.kernel.strategy``), and the renames that made twins say which room holds what
(``nasforge.run.journal`` is now ``nasforge.run.journal_file``; the full list is
:data:`nasforge._moved_map.RENAMED`). An old path is answered with the module at its new
place, the very same module object, so classes compare equal whichever path imported
them; importing it warns with a :class:`DeprecationWarning` naming the new path and the
release that removes the old one.

A few names moved between modules too. Those that stayed inside the kernel are found by
the kernel module itself (``nasforge.kernel.strategy.OneShotStrategy``). Those that left
the kernel for the run layer (``train_members``, which ``nasforge.ensemble`` held before the
split) are found only on the old top-level path, which is then a forwarding module of its
own: a kernel module never reaches up into the run layer, not even through a string.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

from nasforge._moved_map import MOVED_TO, REMOVED_IN, RENAMED

#: Old module path -> its new place (submodules follow their package).
MOVED = {f"nasforge.{n}": f"nasforge.{layer}.{n}" for layer, names in MOVED_TO.items() for n in names.split()}
MOVED = {old: RENAMED.get(new, new) for old, new in MOVED.items()}  # renamed since the split
MOVED.update(RENAMED)

#: Names a module held before they moved, by their new module (space-separated). Keys are
#: the module a user imported them from: an old top-level path where the names left the
#: kernel (answered by a forwarding module), a kernel module where they stayed inside it.
NAMES_MOVED: dict[str, dict[str, str]] = {
    "nasforge.datasets": {
        "nasforge.run.builtin_datasets": "load_digits load_gaussian with_random_labels "
        "load_digits_random_labels BUILTIN_DATASETS"
    },
    "nasforge.ensemble": {
        "nasforge.run.ensemble_training": "MemberRecipe EpochCallback train_network train_members "
        "predict_probabilities ensemble_scores_of_results evaluate_members"
    },
    "nasforge.fidelity": {
        "nasforge.run.fidelity_spent": "fidelity_spent trial_spent budget_trained varies_budget "
        "was_stopped at_full"
    },
    "nasforge.objectives": {
        "nasforge.run.goal_checks": "goal_of_header declared_objectives check_declared check_measured"
    },
    "nasforge.kernel.result": {"nasforge.kernel.outcome": "SearchOutcome"},
    "nasforge.kernel.search_space": {"nasforge.kernel.network_factory": "build_network network_factory"},
    "nasforge.kernel.strategy": {"nasforge.kernel.one_shot": "OneShotStrategy"},
    "nasforge.kernel.option_types": {"nasforge.kernel.errors": "OptionError show suggest"},
}


def new_name(old: str) -> str | None:
    """Where module ``old`` lives now, or None when it never moved."""
    head, dot, rest = old, "", ""
    while head not in MOVED:
        head, dot, tail = head.rpartition(".")
        if not dot:
            return None
        rest = f"{tail}.{rest}" if rest else tail
    return MOVED[head] + (f".{rest}" if rest else "")


class _OldModule(ModuleType):
    """An old top-level path whose names partly left the kernel: the kernel module's names,
    and the moved ones found where they went (each with a DeprecationWarning)."""

    def __init__(self, old: str, now: ModuleType) -> None:
        super().__init__(old, now.__doc__)
        self.__dict__["_now"] = now

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self.__dict__["_now"], name)
        except AttributeError:
            return moved_attribute(self.__name__, name)

    def __dir__(self) -> list[str]:
        return sorted({*dir(self.__dict__["_now"]), *" ".join(NAMES_MOVED[self.__name__].values()).split()})


class _Alias(importlib.abc.Loader):
    """Answers an old path with the module at the new one (see the module's docstring)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        target = new_name(old)
        assert target is not None
        warnings.warn(
            f"{old} is now {target}; import it from there (the old path goes in nasforge {REMOVED_IN})",
            DeprecationWarning,
            stacklevel=2,
        )
        now = importlib.import_module(target)
        sys.modules[old] = _OldModule(old, now) if old in NAMES_MOVED else now


def spec_of(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec that imports old path ``name`` as its new module (None: not a moved path)."""
    return importlib.machinery.ModuleSpec(name, _Alias()) if new_name(name) is not None else None


def moved_attribute(module: str, name: str) -> Any:
    """``module.name`` for a name ``module`` held before it moved, found where it went with
    a :class:`DeprecationWarning`; an AttributeError for any other name."""
    for target, text in NAMES_MOVED.get(module, {}).items():
        if name in text.split():
            warnings.warn(
                f"{module}.{name} is now {target}.{name} (the old name goes in nasforge {REMOVED_IN})",
                DeprecationWarning,
                stacklevel=3,
            )
            return getattr(importlib.import_module(target), name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")

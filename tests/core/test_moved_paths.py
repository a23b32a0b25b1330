"""Code written against an older layout of the core still imports until nasforge 0.3: every
old module path (from before the three-layer split, or before a twin was renamed) answers
with the module at its new place (the same object, with a DeprecationWarning naming the
new path and the release that removes the old one), and names that moved between modules
are found where they went. Names that left the kernel are found only on their old
top-level path: a kernel module never reaches into the run layer."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from nasforge import _moved
from nasforge._moved_map import REMOVED_IN


def _import_old(old: str) -> object:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(_moved.MOVED[old])}.* {REMOVED_IN}\)"):
        return importlib.import_module(old)


def test_the_old_paths_go_in_0_3() -> None:
    assert REMOVED_IN == "0.3"


@pytest.mark.slow
@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_module_path_is_the_new_module(old: str) -> None:
    new = importlib.import_module(_moved.MOVED[old])
    module = _import_old(old)
    if old in _moved.NAMES_MOVED:  # a forwarding module: the kernel module's names, and the moved ones
        names = [n for n in vars(new) if not n.startswith("__")]
        assert names and all(getattr(module, n) is getattr(new, n) for n in names)
    else:
        assert module is new


def test_renamed_modules_follow_into_their_submodules() -> None:
    from nasforge.run.builtin_datasets.mnist1d import load_mnist1d

    (package,) = (old for old, new in _moved.RENAMED.items() if new == "nasforge.run.builtin_datasets")
    sys.modules.pop(f"{package}.mnist1d", None)
    _import_old(package)
    with pytest.warns(DeprecationWarning, match="builtin_datasets.mnist1d"):
        old = importlib.import_module(f"{package}.mnist1d")
    assert old.load_mnist1d is load_mnist1d


def test_old_submodule_paths_and_from_imports() -> None:
    from nasforge.kernel.testing.conformance import StrategyConformance
    from nasforge.tools.scoring.sweep import score_genotypes

    for name in ("nasforge.testing.conformance", "nasforge.scoring.sweep", "nasforge.testing"):
        sys.modules.pop(name, None)
    with pytest.warns(DeprecationWarning):
        from nasforge.testing.conformance import StrategyConformance as old_kit
    with pytest.warns(DeprecationWarning):
        from nasforge.scoring.sweep import score_genotypes as old_sweep
    assert old_kit is StrategyConformance and old_sweep is score_genotypes


@pytest.mark.parametrize(
    ("module", "name", "now"),
    [
        ("nasforge.kernel.strategy", "OneShotStrategy", "nasforge.kernel.one_shot"),
        ("nasforge.kernel.result", "SearchOutcome", "nasforge.kernel.outcome"),
        ("nasforge.kernel.search_space", "build_network", "nasforge.kernel.network_factory"),
        ("nasforge.kernel.option_types", "OptionError", "nasforge.kernel.errors"),
        ("nasforge.kernel.option_types", "suggest", "nasforge.kernel.errors"),
        ("nasforge.ensemble", "train_members", "nasforge.run.ensemble_training"),
        ("nasforge.datasets", "load_digits", "nasforge.run.builtin_datasets"),
        ("nasforge.fidelity", "at_full", "nasforge.run.fidelity_spent"),
        ("nasforge.objectives", "goal_of_header", "nasforge.run.goal_checks"),
    ],
)
def test_a_moved_name_is_found_where_it_went(module: str, name: str, now: str) -> None:
    held = _import_old(module) if module in _moved.MOVED else importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(f'{now}.{name}')} .* {REMOVED_IN}\)"):
        value = getattr(held, name)
    assert value is getattr(importlib.import_module(now), name)


@pytest.mark.parametrize(
    ("module", "name"),
    [("nasforge.kernel.ensemble", "train_members"), ("nasforge.kernel.datasets", "load_digits")],
)
def test_a_kernel_module_never_reaches_into_the_run_layer(module: str, name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), name)


def test_moved_names_stay_in_their_layer() -> None:
    """A kernel module forwards only to the kernel; names that left it are keyed by an old path."""
    for module, targets in _moved.NAMES_MOVED.items():
        if module.startswith("nasforge.kernel."):
            assert all(t.startswith("nasforge.kernel.") for t in targets), module
        else:
            assert module in _moved.MOVED, module


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        importlib.import_module("nasforge.kernel.strategy").no_such_name  # noqa: B018
    with pytest.raises(AttributeError):
        _import_old("nasforge.ensemble").no_such_name  # noqa: B018

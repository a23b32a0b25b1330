"""Code written against the core before its three-layer split still imports: every old
module path answers with the module at its new place (the same object, with a
DeprecationWarning), and names that moved between modules are found where they went."""

from __future__ import annotations

import importlib
import sys

import pytest

from nasforge import _moved


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_module_path_is_the_new_module(old: str) -> None:
    new = importlib.import_module(_moved.MOVED[old])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=_moved.MOVED[old]):
        module = importlib.import_module(old)
    assert module is new


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
        ("nasforge.kernel.ensemble", "train_members", "nasforge.run.ensemble_training"),
        ("nasforge.kernel.datasets", "load_digits", "nasforge.run.builtin_datasets"),
        ("nasforge.kernel.search_space", "build_network", "nasforge.kernel.network_factory"),
        ("nasforge.kernel.fidelity", "at_full", "nasforge.run.fidelity_spent"),
        ("nasforge.kernel.objectives", "goal_of_header", "nasforge.run.goal_checks"),
    ],
)
def test_a_moved_name_is_found_where_it_went(module: str, name: str, now: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"{now}.{name}"):
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(now), name)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        importlib.import_module("nasforge.kernel.strategy").no_such_name  # noqa: B018

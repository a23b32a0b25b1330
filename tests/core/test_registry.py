from __future__ import annotations

import pytest

from nasforge import UnknownNameError, get_registry, hookimpl
from nasforge.kernel.registry import load_registry
from nasforge.kernel.testing import ToySpace


def test_builtins_registered() -> None:
    reg = get_registry()
    assert {"digits", "gaussian", "digits-random-labels"} <= set(reg.names("dataset"))
    assert {"inprocess", "process"} <= set(reg.names("executor"))
    assert reg.get("space", "toy") is ToySpace


def test_unknown_name_suggests() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'toy'"):
        get_registry().get("space", "tyo")


def test_broken_plugin_is_reported_not_fatal() -> None:
    class Broken:
        @hookimpl
        def nasforge_register_strategies(self) -> list:
            raise RuntimeError("kaboom")

        @hookimpl
        def nasforge_register_metrics(self) -> list:
            return []

    class Fine:
        @hookimpl
        def nasforge_register_search_spaces(self) -> list:
            return [ToySpace]

    reg = load_registry(entry_points=False, extra_plugins=[Broken(), Fine()])
    assert reg.get("space", "toy") is ToySpace
    broken = next(p for p in reg.plugins if "Broken" in p.module)
    fine = next(p for p in reg.plugins if "Fine" in p.module)
    assert not broken.ok and "kaboom" in (broken.error or "")
    assert "nasforge_register_strategies" in (broken.error or "")
    assert fine.ok and fine.provides == ("space:toy",)
    assert reg.names("strategy") == []  # the failed hook contributed nothing, and broke nothing


def test_component_without_name_fails_its_plugin_only() -> None:
    class Nameless:
        @hookimpl
        def nasforge_register_search_spaces(self) -> list:
            return [object()]

    reg = load_registry(entry_points=False, extra_plugins=[Nameless()])
    bad = next(p for p in reg.plugins if "Nameless" in p.module)
    assert not bad.ok and "no 'name'" in (bad.error or "")
    assert reg.get("space", "toy") is ToySpace  # the built-ins still registered


def test_name_clash_keeps_the_first_and_says_so() -> None:
    class Shadow(ToySpace):
        """A third party's space that reuses a registered name."""

    class First:
        @hookimpl
        def nasforge_register_search_spaces(self) -> list:
            return [Shadow]

    reg = load_registry(entry_points=False, extra_plugins=[First()])
    # the built-in toy space was registered first and is kept; the warning names both
    assert reg.get("space", "toy") is ToySpace
    assert reg.origin("space", "toy") == "nasforge.builtin"
    (conflict,) = reg.conflicts
    assert "nasforge.builtin" in conflict and "kept the one from 'nasforge.builtin'" in conflict
    # and the order is deterministic: the same registry is built every time
    again = load_registry(entry_points=False, extra_plugins=[First()])
    assert again.get("space", "toy") is ToySpace


def test_entry_points_register_first_party_first_then_by_name() -> None:
    reg = get_registry()
    names = [p.name for p in reg.plugins]
    first_party = [p.name for p in reg.plugins if p.distribution == "nasforge"]
    assert names[0] == "nasforge.builtin"
    assert first_party == ["nasforge.builtin", *sorted(first_party[1:])]
    assert names[: len(first_party)] == first_party


def test_first_party_plugins_load() -> None:
    reg = get_registry()
    failed = {p.name: p.error for p in reg.plugins if not p.ok}
    assert "search" not in failed, failed
    assert {"random", "rea", "local"} <= set(reg.names("strategy"))


def test_evaluator_refuses_foreign_space() -> None:
    from nasforge import CapabilityError
    from nasforge.kernel.testing import ToyEvaluator

    class Other(ToySpace):
        name = "other"

    with pytest.raises(CapabilityError, match="works on spaces \\['toy'\\], not 'other'"):
        ToyEvaluator(Other())

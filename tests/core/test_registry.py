from __future__ import annotations

import pytest

from nasforge import UnknownNameError, get_registry, hookimpl
from nasforge.kernel.registry import PLUGINS_ENV, load_registry
from nasforge.kernel.testing import ToySpace
from nasforge.run.executors import InProcessExecutor


def test_builtins_registered() -> None:
    reg = get_registry()
    assert {"digits", "gaussian", "digits-random-labels"} <= set(reg.names("dataset"))
    assert {"inprocess", "process"} <= set(reg.names("executor"))
    assert reg.origin("evaluator", "short-train") == "nasforge.builtin"


@pytest.mark.slow
def test_the_toy_space_is_no_builtin_but_a_plugin_module(monkeypatch) -> None:
    """Nothing a user searches by default: tests and demos name its module (NASFORGE_PLUGINS)."""
    monkeypatch.delenv(PLUGINS_ENV, raising=False)
    assert not load_registry().has("space", "toy")
    monkeypatch.setenv(PLUGINS_ENV, "nasforge.kernel.testing.toy, no_such_plugin_module")
    reg = load_registry()
    assert reg.get("space", "toy") is ToySpace and reg.origin("space", "toy") == "nasforge.kernel.testing.toy"
    broken = next(p for p in reg.plugins if p.name == "no_such_plugin_module")
    assert not broken.ok and "ModuleNotFoundError" in (broken.error or "")
    assert not load_registry(entry_points=False).has("space", "toy"), "named modules load with entry points"


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
    assert reg.has("evaluator", "short-train")  # the built-ins still registered


def test_name_clash_keeps_the_first_and_says_so() -> None:
    class Shadow(InProcessExecutor):
        """A third party's executor that reuses a registered name."""

    class First:
        @hookimpl
        def nasforge_register_executors(self) -> list:
            return [Shadow]

    reg = load_registry(entry_points=False, extra_plugins=[First()])
    # the built-in executor was registered first and is kept; the warning names both
    assert reg.get("executor", "inprocess") is InProcessExecutor
    assert reg.origin("executor", "inprocess") == "nasforge.builtin"
    (conflict,) = reg.conflicts
    assert "nasforge.builtin" in conflict and "kept the one from 'nasforge.builtin'" in conflict
    # and the order is deterministic: the same registry is built every time
    again = load_registry(entry_points=False, extra_plugins=[First()])
    assert again.get("executor", "inprocess") is InProcessExecutor


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

from __future__ import annotations

import pytest

from nasforge import UnknownNameError, get_registry, hookimpl
from nasforge.registry import Registry, create_plugin_manager
from nasforge.testing import ToySpace


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

    class Fine:
        @hookimpl
        def nasforge_register_search_spaces(self) -> list:
            return [ToySpace]

    pm, infos = create_plugin_manager(entry_points=False, extra_plugins=[Fine()])
    reg = Registry(pm, infos)
    assert reg.get("space", "toy") is ToySpace
    # a plugin whose hook raises while listing shows the error in `provides`
    pm2, infos2 = create_plugin_manager(entry_points=False, extra_plugins=[Broken()])
    assert any("error" in p for info in infos2 for p in info.provides)


def test_first_party_plugins_load() -> None:
    reg = get_registry()
    failed = {p.name: p.error for p in reg.plugins if not p.ok}
    assert "search" not in failed, failed
    assert {"random", "rea", "local"} <= set(reg.names("strategy"))


def test_evaluator_refuses_foreign_space() -> None:
    from nasforge import CapabilityError
    from nasforge.testing import ToyEvaluator

    class Other(ToySpace):
        name = "other"

    with pytest.raises(CapabilityError, match="works on spaces \\['toy'\\], not 'other'"):
        ToyEvaluator(Other())

"""The registry's typed accessors give each kind as its contract's class, and refuse in one
line a name whose component is of another kind (mypy's view: tests/typing/registry_types.py)."""

from __future__ import annotations

import pytest

from nasforge import Evaluator, Metric, SearchSpace, Strategy
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.one_shot import OneShotStrategy, one_shot_strategy
from nasforge.kernel.registry import get_registry


def test_each_kind_comes_as_its_contract() -> None:
    registry = get_registry()
    assert issubclass(registry.strategy("rea"), Strategy)
    assert issubclass(registry.strategy("search:rea"), Strategy)
    assert issubclass(one_shot_strategy(registry, "darts"), OneShotStrategy)
    assert issubclass(registry.search_space("nb201"), SearchSpace)
    assert issubclass(registry.metric("synflow"), Metric)
    assert issubclass(registry.evaluator("nb201-table"), Evaluator)
    assert isinstance(registry.space("nb201"), SearchSpace)


def test_a_one_shot_strategy_asked_for_as_ask_tell_says_which_it_is() -> None:
    refused = r"^strategy 'darts' of plugin 'darts' is not a nasforge\.kernel\.strategy\.Strategy; "
    typed = r"it is one-shot: nasforge\.kernel\.one_shot\.one_shot_strategy\(registry, name\)$"
    with pytest.raises(NasforgeError, match=refused + typed):
        get_registry().strategy("darts")

"""The conformance kit applied to the NAS-Bench-201 plugin."""

from __future__ import annotations

import pytest

from nasforge.api import load_space
from nasforge.kernel.registry import get_registry
from nasforge.kernel.testing.conformance import (
    EvaluatorConformance,
    SearchSpaceConformance,
)
from nasforge.run.conformance import StrategyRunConformance


class TestNB201Space(SearchSpaceConformance):
    @pytest.fixture
    def space(self):
        return load_space("nb201")

    @pytest.fixture
    def build_kwargs(self):
        return {"C": 8, "N": 1}


class TestNB201TableEvaluator(EvaluatorConformance):
    @pytest.fixture
    def evaluator(self):
        return get_registry().get("evaluator", "nb201-table")(load_space("nb201"), dataset="cifar100")


@pytest.mark.parametrize("name", ["rea", "random", "local"])
class TestBaselinesOnNB201(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self, name):
        return get_registry().get("strategy", name)

    @pytest.fixture
    def space(self):
        return load_space("nb201")

    @pytest.fixture
    def evaluator(self, space):
        return get_registry().get("evaluator", "nb201-table")(space, dataset="cifar10")

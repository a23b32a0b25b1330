"""The plugin passes nasforge's conformance kit (run with pytest from this folder)."""

from __future__ import annotations

import pytest

from nasforge.kernel.testing.conformance import MetricConformance, SearchSpaceConformance, StrategyConformance
from nasforge.kernel.testing.supernet_conformance import SupernetConformance
from nasforge_hello import HelloCellSpace, HillClimb, WeightNorm


class TestHillClimb(StrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return HillClimb


class TestWeightNorm(MetricConformance):
    @pytest.fixture
    def metric(self):
        return WeightNorm()


class TestHelloCellSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self):
        return HelloCellSpace()

    @pytest.fixture
    def input_shape(self):
        return (2, 3, 8, 8)


class TestHelloCellSupernet(SupernetConformance):
    """What lets DARTS, PR-DARTS and NASI search the space (see CONTRIBUTING.md)."""

    @pytest.fixture
    def space(self):
        return HelloCellSpace()

    @pytest.fixture
    def supernet_options(self):
        return {"C": 4, "num_classes": 4}

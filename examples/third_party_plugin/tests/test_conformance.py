"""The plugin passes nasforge's conformance kit (run with pytest from this folder)."""

from __future__ import annotations

import pytest

from nasforge.testing.conformance import MetricConformance, StrategyConformance
from nasforge_hello import HillClimb, WeightNorm


class TestHillClimb(StrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return HillClimb


class TestWeightNorm(MetricConformance):
    @pytest.fixture
    def metric(self):
        return WeightNorm()

"""The conformance kit applied to the core's toy space and the baseline strategies."""

from __future__ import annotations

import pytest

from nasforge.testing import ToyEvaluator, ToySpace
from nasforge.testing.conformance import (
    EvaluatorConformance,
    MultiObjectiveStrategyConformance,
    SearchSpaceConformance,
    StrategyConformance,
)
from nasforge_search import NSGA2, LocalSearch, MultiObjectiveRandomSearch, RandomSearch, RegularizedEvolution


class TestToySpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self):
        return ToySpace()

    @pytest.fixture
    def input_shape(self):
        return (2, 8)


class TestToyEvaluator(EvaluatorConformance):
    @pytest.fixture
    def evaluator(self):
        return ToyEvaluator(ToySpace())


class TestRandomSearch(StrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return RandomSearch


class TestRegularizedEvolution(StrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return RegularizedEvolution

    @pytest.fixture
    def strategy_options(self):
        return {"population_size": 6, "sample_size": 3}


class TestLocalSearch(StrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return LocalSearch


class TestMultiObjectiveRandomSearch(MultiObjectiveStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return MultiObjectiveRandomSearch


class TestNSGA2(MultiObjectiveStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return NSGA2

    @pytest.fixture
    def strategy_options(self):
        return {"population_size": 6, "tournament_size": 2}

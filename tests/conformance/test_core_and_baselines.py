"""The conformance kit applied to the core's toy space and the baseline strategies."""

from __future__ import annotations

import pytest

from nasforge.kernel.testing import ToyEvaluator, ToyFidelityEvaluator, ToySpace
from nasforge.kernel.testing.conformance import (
    EvaluatorConformance,
    SearchSpaceConformance,
)
from nasforge.run.conformance import MultiObjectiveStrategyRunConformance, StrategyRunConformance
from nasforge_search import (
    NSGA2,
    Hyperband,
    LocalSearch,
    MedianPruner,
    MultiObjectiveRandomSearch,
    RandomSearch,
    RegularizedEvolution,
    SuccessiveHalving,
)


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


class TestRandomSearch(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return RandomSearch


class TestRegularizedEvolution(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return RegularizedEvolution

    @pytest.fixture
    def strategy_options(self):
        return {"population_size": 6, "sample_size": 3}


class TestLocalSearch(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return LocalSearch


class TestMultiObjectiveRandomSearch(MultiObjectiveStrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return MultiObjectiveRandomSearch


class TestNSGA2(MultiObjectiveStrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return NSGA2

    @pytest.fixture
    def strategy_options(self):
        return {"population_size": 6, "tournament_size": 2}


class TestToyFidelityEvaluator(EvaluatorConformance):
    @pytest.fixture
    def evaluator(self):
        return ToyFidelityEvaluator(ToySpace())


class _MultiFidelity(StrategyRunConformance):
    """Fidelity-asking strategies, on the toy evaluator that varies epochs."""

    @pytest.fixture
    def evaluator(self, space):
        return ToyFidelityEvaluator(space)

    @pytest.fixture
    def strategy_options(self):
        return {"max_fidelity": 9}


class TestSuccessiveHalving(_MultiFidelity):
    @pytest.fixture
    def strategy_cls(self):
        return SuccessiveHalving


class TestHyperband(_MultiFidelity):
    @pytest.fixture
    def strategy_cls(self):
        return Hyperband


class TestMedianPruner(_MultiFidelity):
    @pytest.fixture
    def strategy_cls(self):
        return MedianPruner

    @pytest.fixture
    def strategy_options(self):
        return {"strategy": "rea", "strategy_options": {"population_size": 6, "sample_size": 3}, "warmup": 3}


class TestMedianPrunedHyperband(TestMedianPruner):
    @pytest.fixture
    def strategy_options(self):
        return {"strategy": "hyperband", "max_fidelity": 9, "warmup": 3}

"""The conformance kits on this plugin: the act-mlp space and its supernet, the simplex
strategy on act-mlp and on NAS-Bench-201 (another plugin's space, met only through the
supernet contract), and the other one-shot methods on act-mlp."""

from __future__ import annotations

import pytest

from nasforge.api import load_space
from nasforge.kernel.registry import get_registry
from nasforge.kernel.testing.conformance import OneShotStrategyConformance, SearchSpaceConformance
from nasforge.kernel.testing.supernet_conformance import SupernetConformance
from nasforge_simplex.act_mlp_space import ActMlpSpace
from nasforge_simplex.strategy import SimplexSearch

SPACES = {
    "default": {},
    "two-layers-identity": {"layers": 2, "ops": ["relu", "identity", "gelu"], "negative_slope": 0.1},
}


@pytest.mark.parametrize("options", sorted(SPACES))
class TestActMlpSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self, options):
        return ActMlpSpace(**SPACES[options])

    @pytest.fixture
    def build_kwargs(self):
        return {"width": 8}


@pytest.mark.parametrize("options", sorted(SPACES))
class TestActMlpSupernet(SupernetConformance):
    @pytest.fixture
    def space(self, options):
        return ActMlpSpace(**SPACES[options])

    @pytest.fixture
    def supernet_options(self):
        return {"width": 8, "num_classes": 4, "in_channels": 3}


TINY = {"epochs": 1, "max_batches": 2, "batch_size": 8, "rank_candidates": 3, "diagnostic_samples": 16}
SIMPLEX = {
    "eg-first": {**TINY},
    "softmax-second": {**TINY, "parameterisation": "softmax", "mode": "second_order"},
    "proj-single": {**TINY, "parameterisation": "proj", "mode": "single_level", "loss": "squared"},
}


class TestSimplexOnActMlp(OneShotStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return SimplexSearch

    @pytest.fixture(params=sorted(SIMPLEX))
    def strategy_options(self, request):
        return {**SIMPLEX[request.param], "supernet": {"width": 8}}

    @pytest.fixture
    def space(self):
        return ActMlpSpace()


class TestSimplexOnNB201(OneShotStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return SimplexSearch

    @pytest.fixture
    def strategy_options(self):
        return {**TINY, "supernet": {"C": 4, "N": 1}}

    @pytest.fixture
    def space(self):
        return load_space("nb201")


OTHERS = {
    "darts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"width": 8}},
    "prdarts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"width": 8}},
    "nasi": {"steps": 2, "batch_size": 8},
}


class TestOtherOneShotMethodsOnActMlp(OneShotStrategyConformance):
    """act-mlp's supernet is searchable by every one-shot method, not only this plugin's."""

    @pytest.fixture(params=sorted(OTHERS))
    def name(self, request):
        return request.param

    @pytest.fixture
    def strategy_cls(self, name):
        return get_registry().get("strategy", name)

    @pytest.fixture
    def strategy_options(self, name):
        return OTHERS[name]

    @pytest.fixture
    def space(self):
        return ActMlpSpace()

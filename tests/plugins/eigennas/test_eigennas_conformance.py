"""The conformance kits on this plugin: the mlp-res space and supernet, the eigennas strategy,
its metrics, and every one-shot method of the other plugins searching mlp-res through the
supernet contract alone."""

from __future__ import annotations

from typing import Any

import pytest

from nasforge.kernel.registry import get_registry
from nasforge.kernel.testing.conformance import (
    MetricConformance,
    OneShotStrategyConformance,
    SearchSpaceConformance,
)
from nasforge.kernel.testing.supernet_conformance import SupernetConformance
from nasforge.run.conformance import StrategyRunConformance
from nasforge_eigennas import EigenNas, EigenNasTrace, InfiniteWidthTrace, MLPResSpace


@pytest.fixture(params=[3, 4, 5], ids=lambda d: f"depth{d}")
def mlp_space(request) -> MLPResSpace:
    return MLPResSpace(depth=request.param)


class TestMlpResSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self, mlp_space):
        return mlp_space

    @pytest.fixture
    def build_kwargs(self) -> dict[str, Any]:
        return {"width": 16, "in_channels": 3}  # the kit's (2, 3, 32, 32) input, pooled to 3x8x8


class TestMlpResSupernet(SupernetConformance):
    @pytest.fixture
    def space(self, mlp_space):
        return mlp_space

    @pytest.fixture
    def supernet_options(self) -> dict[str, Any]:
        return {"width": 16, "in_channels": 3, "num_classes": 4}


#: Tiny scoring settings for the toy space's networks (flat 8 features, 3 classes).
TOY_OPTIONS = {
    "sample_size": 20,
    "top_k": 6,
    "batch_size": 6,
    "score_data": "gaussian",
    "input_shape": [8],
    "num_classes": 3,
}


class TestEigenNasStrategy(StrategyRunConformance):
    """On the kit's toy space: 20 candidates scored, the top 6 asked, then the best repeated."""

    @pytest.fixture
    def strategy_cls(self):
        return EigenNas

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return dict(TOY_OPTIONS)


class TestEigenNasStrategyOnMlpRes(StrategyRunConformance):
    """On mlp-res with the data-free infinite-width score (the toy evaluator is replaced by
    the core's short training on digits, one epoch)."""

    n_trials = 8

    @pytest.fixture
    def strategy_cls(self):
        return EigenNas

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {"sample_size": 30, "top_k": 5, "metric": "eigennas_ntk_diag", "batch_size": 2}

    @pytest.fixture
    def space(self):
        return MLPResSpace(depth=3)

    @pytest.fixture
    def evaluator(self, space):
        return get_registry().get("evaluator", "short-train")(space, epochs=1, build={"width": 16})


@pytest.mark.parametrize("metric_cls", [EigenNasTrace, InfiniteWidthTrace])
class TestEigenNasMetrics(MetricConformance):
    @pytest.fixture
    def metric(self, metric_cls):
        return metric_cls()


ONE_SHOT = {
    "darts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"width": 8}},
    "prdarts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"width": 8}},
    "nasi": {"steps": 2, "batch_size": 8, "calibration_samples": 2, "supernet": {"width": 8}},
}


class TestOneShotMethodsOnMlpRes(OneShotStrategyConformance):
    """DARTS, PR-DARTS and NASI search mlp-res knowing nothing of it but its supernet."""

    @pytest.fixture(params=sorted(ONE_SHOT))
    def name(self, request):
        return request.param

    @pytest.fixture
    def strategy_cls(self, name):
        return get_registry().get("strategy", name)

    @pytest.fixture
    def strategy_options(self, name):
        return ONE_SHOT[name]

    @pytest.fixture
    def space(self):
        return MLPResSpace(depth=4)

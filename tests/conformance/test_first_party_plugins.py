"""The conformance kit applied to every first-party metric and the DARTS space."""

from __future__ import annotations

import pytest

from nasforge.api import load_space
from nasforge.kernel.registry import get_registry
from nasforge.kernel.testing.conformance import (
    MetricConformance,
    OneShotStrategyConformance,
    SearchSpaceConformance,
)

METRICS = get_registry().names("metric")


def test_first_party_metrics_registered() -> None:
    expected = {
        "params",
        "flops",
        "grad_norm",
        "snip",
        "grasp",
        "fisher",
        "fisher_channel",
        "synflow",
        "jacob_cov",
        "naswot",
        "ntk_trace",
        "ntk_trace_per_sample",
        "ntk_cond",
        "ntk_cond_per_sample",
        "ntk_lambda_min",
        "knas",
        "nasi_proxy",
        "ensemble",
        "ensemble_vote",
    }
    assert expected <= set(METRICS)


@pytest.mark.parametrize("name", METRICS)
class TestEveryMetric(MetricConformance):
    @pytest.fixture
    def metric(self, name):
        return get_registry().get("metric", name)()


class TestDartsSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self):
        return load_space("darts")

    @pytest.fixture
    def build_kwargs(self):
        return {"C": 4, "layers": 3, "auxiliary": False}


class TestNasnetCellsSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self):
        return load_space("nasnet-cells")

    @pytest.fixture
    def build_kwargs(self):
        return {"C": 4, "layers": 3, "auxiliary": False}


ONE_SHOT = {
    "darts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"C": 4, "N": 1}},
    "prdarts": {"epochs": 1, "max_batches": 2, "batch_size": 8, "supernet": {"C": 4, "N": 1}},
}


@pytest.mark.parametrize("name", sorted(ONE_SHOT))
class TestOneShotOnNB201(OneShotStrategyConformance):
    @pytest.fixture
    def strategy_cls(self, name):
        return get_registry().get("strategy", name)

    @pytest.fixture
    def strategy_options(self, name):
        return ONE_SHOT[name]

    @pytest.fixture
    def space(self):
        return load_space("nb201")

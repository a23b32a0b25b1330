"""HNAS with a metric the user chooses is a named variant, and its pool reuses M_Trace's κ."""

from __future__ import annotations

import random

import pytest

import nasforge_hnas.pool_metrics as pool_metrics
from nasforge_hnas import HnasSettings, PoolCache, PoolScorer, PoolSettings, ScoredPool
from nasforge_nb201.space import NB201Space


def test_a_preset_with_another_metric_is_labelled_as_a_variant() -> None:
    assert HnasSettings.from_options({"preset": "thesis"}).label() == "thesis"
    assert HnasSettings.from_options({"preset": "thesis", "metric": "synflow"}).label() == (
        "thesis + metric=synflow"
    )
    # options the preset leaves to the caller (the metric network) do not make a variant
    assert HnasSettings.from_options({"preset": "thesis", "build": {"C": 16, "N": 5}}).label() == "thesis"
    assert HnasSettings.from_options({}).label() == "defaults"
    assert HnasSettings.from_options({"metric": "snip"}).label() == "defaults + metric=snip"


@pytest.mark.slow
def test_a_variant_pool_takes_kappa_from_the_m_trace_pool(tmp_path, monkeypatch) -> None:
    space = NB201Space()
    base = {"batch_size": 8, "input_shape": (3, 8, 8), "build": {"C": 4, "N": 1}}
    cache = PoolCache(tmp_path / "pool.jsonl")
    genotypes = list(dict.fromkeys(space.sample(random.Random(i)) for i in range(4)))
    trace_pool = ScoredPool()
    PoolScorer(space, PoolSettings(**base), cache).fill(trace_pool, genotypes)
    calls = []
    real = pool_metrics.kernel_metrics
    monkeypatch.setattr(pool_metrics, "kernel_metrics", lambda *a, **k: calls.append(1) or real(*a, **k))
    snip_pool = ScoredPool()
    PoolScorer(space, PoolSettings(metric="snip", **base), cache).fill(snip_pool, genotypes)
    assert calls == [], "no kernel is formed when M_Trace's pool already holds kappa"
    assert list(snip_pool.kappa) == list(trace_pool.kappa)
    fresh = ScoredPool()
    PoolScorer(space, PoolSettings(metric="snip", **base), PoolCache(tmp_path / "other.jsonl")).fill(
        fresh, genotypes
    )
    assert len(calls) == len(genotypes)  # without it, each kappa comes from its own kernel
    assert list(fresh.kappa) == pytest.approx(list(trace_pool.kappa), rel=1e-9)
    assert list(fresh.metric) == list(snip_pool.metric)


@pytest.mark.slow
def test_a_fixed_pool_seed_gives_every_search_seed_the_same_pool(tmp_path) -> None:
    from nasforge.kernel.result import Objective
    from nasforge_hnas import Hnas

    options = {"pool_size": 6, "batch_size": 8, "input_shape": [3, 8, 8], "build": {"C": 4, "N": 1}}
    options["cache"] = str(tmp_path / "pool.jsonl")
    pools = []
    for seed in (0, 1):
        strategy = Hnas(NB201Space(), objective=Objective("x"), seed=seed, pool_seed=5, **options)
        strategy.ask()
        pools.append(list(strategy.pool.genotypes))
    own = Hnas(NB201Space(), objective=Objective("x"), seed=1, **options)
    own.ask()
    assert pools[0] == pools[1]
    assert list(own.pool.genotypes) != pools[0]

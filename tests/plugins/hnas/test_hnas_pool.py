"""Pool scoring: (M, κ) from one NTK, a fixed batch and init, and the score cache."""

from __future__ import annotations

import math
import random

import pytest

from nasforge.tools.backends import KernelSpec, empirical_ntk, spectrum
from nasforge_hnas import PoolCache, PoolScorer, PoolSettings, ScoredPool
from nasforge_hnas.pool_metrics import PoolMetrics
from nasforge_nb201.space import NB201Space

SETTINGS = PoolSettings(batch_size=16, input_shape=(3, 8, 8), build={"C": 4, "N": 1})


@pytest.mark.slow
def test_pool_metrics_are_trace_and_condition_of_one_ntk() -> None:
    space = NB201Space()
    scorer = PoolScorer(space, SETTINGS)
    g = space.parse("|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|")
    got = scorer.score(g)
    x, _ = scorer.batch()
    import torch

    torch.manual_seed(SETTINGS.init_seed)
    s = spectrum(empirical_ntk(space.build(g, C=4, N=1).train(), x, spec=KernelSpec(output="sum")))
    assert got.metric == pytest.approx(math.sqrt(s.trace / 16), rel=1e-6)
    assert got.kappa == pytest.approx(s.lambda_max / s.lambda_min, rel=1e-6)
    assert scorer.score(g).metric == pytest.approx(got.metric, rel=1e-9)  # independent of call order


def test_cache_round_trip_and_torn_lines(tmp_path) -> None:
    path = tmp_path / "pool.jsonl"
    space = NB201Space()
    scorer = PoolScorer(space, SETTINGS, PoolCache(path))
    gs = [space.sample(random.Random(i)) for i in range(3)]
    pool = ScoredPool()
    scorer.fill(pool, gs + gs[:1])
    assert len(pool) == len(set(gs))
    with open(path, "a") as fh:
        fh.write('{"key": "torn')
    again = PoolCache(path)
    assert len(again) == len(set(gs))
    assert again.get(scorer.key, space.format(gs[0])) == PoolMetrics(
        float(pool.metric[0]), float(pool.kappa[0]), float(pool.seconds[0])
    )
    other = PoolSettings(batch_size=8, input_shape=(3, 8, 8), build={"C": 4, "N": 1})
    assert other.digest("nb201") != SETTINGS.digest("nb201")

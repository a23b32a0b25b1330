"""HNAS's M is a magnitude: the pool keeps |M| (the thesis's M_SNIP/M_GraSP/M_KNAS are
absolute values; the authors' code has its abs commented out), and metrics with no such
reading are refused."""

from __future__ import annotations

import random

import pytest

from nasforge.kernel.errors import OptionError
from nasforge.kernel.metric import MetricInfo
from nasforge_hnas import PoolCache, PoolScorer, PoolSettings, ScoredPool
from nasforge_hnas.pool import unfit_for_m
from nasforge_nb201.space import NB201Space


def settings(metric: str) -> PoolSettings:
    return PoolSettings(metric=metric, batch_size=8, input_shape=(3, 8, 8), build={"C": 4, "N": 1})


@pytest.mark.parametrize(
    ("metric", "reason"),
    [
        ("jacob_cov", "never positive"),
        ("ntk_cond", "lower is better"),
        ("ensemble", "ranks a population"),
    ],
)
def test_metrics_that_cannot_be_m_are_refused_in_one_line(metric: str, reason: str) -> None:
    with pytest.raises(OptionError, match=f"metric '{metric}' cannot serve as HNAS's M: .*{reason}") as err:
        PoolScorer(NB201Space(), settings(metric))
    assert "\n" not in str(err.value)


def test_the_rule_reads_the_declared_direction_and_sign() -> None:
    assert unfit_for_m(MetricInfo(name="m")) is None  # signed or unknown: |M|
    assert unfit_for_m(MetricInfo(name="m", sign="nonnegative")) is None
    assert unfit_for_m(MetricInfo(name="m", sign="nonpositive")) is not None
    assert unfit_for_m(MetricInfo(name="m", higher_is_better=False)) is not None


@pytest.mark.slow
def test_a_signed_grasp_enters_the_pool_as_its_magnitude(tmp_path) -> None:
    space = NB201Space()
    cache = PoolCache(tmp_path / "pool.jsonl")
    scorer = PoolScorer(space, settings("grasp"), cache)
    gs = list(dict.fromkeys(space.sample(random.Random(i)) for i in (0, 1, 23, 30)))  # 23, 30: M < 0
    pool = ScoredPool()
    scorer.fill(pool, gs)
    raw = [cache.get(scorer.key, space.format(g)).metric for g in gs]  # the cache keeps M as scored
    assert any(m < 0 for m in raw), raw  # zero-cost GraSP is signed on NB201 cells
    assert list(pool.metric) == pytest.approx([abs(m) for m in raw])
    assert (pool.metric >= 0).all()


def test_a_kernel_the_settings_cannot_form_is_refused_up_front() -> None:
    """bn "decomposed" (the HNAS code's per-layer shares) needs Conv/Linear parameters; the
    pool's kernel takes every parameter, so it is one line now, not a pool of NaN later."""
    bad = PoolSettings(kernel_bn="decomposed", batch_size=8, input_shape=(3, 8, 8), build={"C": 4, "N": 1})
    with pytest.raises(OptionError, match="pool kernel settings: bn 'decomposed' takes params"):
        PoolScorer(NB201Space(), bad)

"""Own rank statistics against scipy; flagged scores always rank worst."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as scipy_stats  # dev dependency (scikit-learn brings it)

from nasforge.tools.scoring import (
    aggregate_ranks,
    kendall,
    normalized_ranks,
    oriented,
    rank_order,
    rankdata,
    spearman,
)


@pytest.mark.parametrize("seed", range(5))
def test_against_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, size=300).astype(float)  # many ties
    y = x + rng.normal(0, 4, size=300)
    y[::7] = np.round(y[::7])
    assert np.allclose(rankdata(x), scipy_stats.rankdata(x))
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic, abs=1e-12)
    flagged = x.copy()
    flagged[::5] = -np.inf  # flagged scores: tied with each other, below everything
    expected = scipy_stats.kendalltau(flagged, y).statistic
    assert kendall(flagged, y) == pytest.approx(expected, abs=1e-12)


def test_kendall_is_exact_on_a_whole_space_sized_sample() -> None:
    """15,625 values (NAS-Bench-201's cells), with ties: the O(n log n) count against scipy."""
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=15_625), 2)
    y = x + rng.normal(0, 0.5, size=15_625)
    assert kendall(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic, abs=1e-12)


def test_perfect_and_reversed() -> None:
    x = np.arange(10.0)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert kendall(x, -x) == pytest.approx(-1.0)
    assert math.isnan(spearman(np.ones(5), x[:5]))


def test_nan_input_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        spearman([1.0, float("nan")], [1.0, 2.0])


def test_flagged_last_in_both_directions() -> None:
    vals = [3.0, float("nan"), 1.0, float("inf"), 2.0, float("-inf")]
    assert list(rank_order(vals, higher_is_better=True)[:3]) == [0, 4, 2]
    assert list(rank_order(vals, higher_is_better=False)[:3]) == [2, 4, 0]
    for hib in (True, False):
        assert set(rank_order(vals, hib)[3:]) == {1, 3, 5}
        assert np.all(np.isneginf(oriented(vals, hib)[[1, 3, 5]]))


def test_normalized_and_aggregated_ranks() -> None:
    a = [10.0, 20.0, 30.0, float("nan")]
    b = [3.0, 2.0, 1.0, 0.0]  # lower is better
    assert list(normalized_ranks(a, True)) == pytest.approx([1 / 3, 2 / 3, 1.0, 0.0])
    agg = aggregate_ranks([a, b], [True, False])
    assert agg[3] == pytest.approx((0 + 1.0) / 2)
    assert agg[2] == pytest.approx((1.0 + 2 / 3) / 2)
    with pytest.raises(ValueError):
        aggregate_ranks([a], [True, False])


def test_infinite_values_are_ties_at_the_end() -> None:
    x = np.array([1.0, 2.0, -np.inf, -np.inf, 5.0])
    y = np.array([1.0, 2.0, 0.0, 0.5, 3.0])
    xr = np.array([1.0, 2.0, -10.0, -10.0, 5.0])
    assert kendall(x, y) == pytest.approx(kendall(xr, y))
    assert kendall(x, y) == pytest.approx(scipy_stats.kendalltau(xr, y).statistic)
    assert spearman(x, y) == pytest.approx(spearman(xr, y))

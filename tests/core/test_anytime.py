"""Median and inter-quartile band of best-so-far step curves over seeds (nasforge.tools.anytime)."""

from __future__ import annotations

import numpy as np
import pytest

from nasforge.tools.anytime import common_grid, quantile_band, step_values


def test_a_step_curve_holds_its_last_value() -> None:
    times, values = np.array([1.0, 2.0, 4.0]), np.array([10.0, 20.0, 40.0])
    got = step_values(times, values, np.array([0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 9.0]))
    assert np.isnan(got[0])
    assert got[1:].tolist() == [10.0, 10.0, 20.0, 20.0, 40.0, 40.0]


def test_the_grid_spans_the_time_every_run_was_going() -> None:
    curves = [(np.array([1.0, 5.0, 10.0]), np.zeros(3)), (np.array([2.0, 8.0]), np.zeros(2))]
    log_grid = common_grid(curves, points=5)
    assert log_grid[0] == pytest.approx(2.0) and log_grid[-1] == pytest.approx(8.0)
    assert np.allclose(np.diff(np.log(log_grid)), np.log(4.0) / 4)  # even on a log axis
    linear = common_grid(curves, points=5, log=False)
    assert linear.tolist() == [2.0, 3.5, 5.0, 6.5, 8.0]
    with pytest.raises(ValueError, match="share no time"):
        common_grid([(np.array([1.0, 2.0]), np.zeros(2)), (np.array([3.0, 4.0]), np.zeros(2))])


def test_quartiles_and_median_over_seeds() -> None:
    """Five seeds whose incumbents improve at different times; at each grid time the band is
    the 25th/50th/75th percentile of the five held values."""
    times = np.array([1.0, 2.0, 3.0])
    curves = [(times, np.array([v, v + 1, v + 2])) for v in (10.0, 20.0, 30.0, 40.0, 50.0)]
    curves.append((np.array([1.0, 2.5, 3.0]), np.array([0.0, 100.0, 100.0])))
    grid = np.array([1.0, 2.0, 2.5, 3.0])
    q25, q50, q75 = quantile_band(curves, grid)
    at_2 = np.array([11.0, 21.0, 31.0, 41.0, 51.0, 0.0])
    at_25 = np.array([11.0, 21.0, 31.0, 41.0, 51.0, 100.0])
    assert q50[1] == np.median(at_2) and q50[2] == np.median(at_25)
    assert q25[1] == np.percentile(at_2, 25) and q75[2] == np.percentile(at_25, 75)
    assert np.all(q25 <= q50) and np.all(q50 <= q75)


def test_bad_curves_are_refused() -> None:
    with pytest.raises(ValueError, match="ascending"):
        step_values(np.array([2.0, 1.0]), np.array([0.0, 1.0]), np.array([1.5]))
    with pytest.raises(ValueError, match="equally long"):
        step_values(np.array([1.0]), np.array([0.0, 1.0]), np.array([1.5]))
    with pytest.raises(ValueError, match="no curves"):
        quantile_band([], np.array([1.0]))

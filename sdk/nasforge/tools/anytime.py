"""Anytime curves over seeds: the median and inter-quartile band of best-so-far step curves.

One search's best-so-far value changes only when a trial finishes, so its curve is a step
function of time (hours on a simulated clock, say), and the trials of different seeds
finish at different times. To summarise seeds, each curve is read on one common grid by
holding its last value (step interpolation), and the quantiles are taken per grid point:
the median line and the 25-75 % band, which stay readable where thirty raw lines do not.
The grid spans only the time every run was going (from the latest first trial to the
earliest end), so every point's quantiles are over all seeds. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: (times, values) of one run's step curve: times ascending, values[i] holds from times[i].
Curve = tuple[np.ndarray, np.ndarray]


def common_grid(curves: Sequence[Curve], points: int = 300, *, log: bool = True) -> np.ndarray:
    """``points`` times from the latest first time to the earliest last time of ``curves``:
    evenly spaced on a log axis (``log``, when every time is positive) or a linear one."""
    if not curves:
        raise ValueError("no curves to put on a grid")
    if points < 2:
        raise ValueError(f"a grid needs at least 2 points, got {points}")
    start = max(float(np.asarray(t)[0]) for t, _ in curves)
    end = min(float(np.asarray(t)[-1]) for t, _ in curves)
    if end < start:
        raise ValueError(f"the curves share no time: the last starts at {start:g}, the first ends at {end:g}")
    if log and start > 0:
        return np.geomspace(start, end, points)
    return np.linspace(start, end, points)


def step_values(times: np.ndarray, values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The step curve ``(times, values)`` read at ``grid``: the value of the last point at
    or before each grid time (NaN before the first point)."""
    times, values = np.asarray(times, dtype=float), np.asarray(values, dtype=float)
    if times.shape != values.shape or times.ndim != 1 or times.size == 0:
        raise ValueError("a curve is two equally long, non-empty 1-d arrays")
    if np.any(np.diff(times) < 0):
        raise ValueError("a curve's times must be ascending")
    index = np.searchsorted(times, np.asarray(grid, dtype=float), side="right") - 1
    out = values[np.clip(index, 0, None)]
    return np.where(index >= 0, out, np.nan)


def quantile_band(
    curves: Sequence[Curve], grid: np.ndarray, quantiles: Sequence[float] = (25, 50, 75)
) -> np.ndarray:
    """Per grid time, the ``quantiles`` (percent) of the curves' step values: an array of
    shape ``(len(quantiles), len(grid))``; by default rows q25, median, q75."""
    if not curves:
        raise ValueError("no curves to summarise")
    stacked = np.stack([step_values(t, v, grid) for t, v in curves])
    return np.percentile(stacked, list(quantiles), axis=0)

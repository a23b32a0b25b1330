"""Pareto dominance on plain arrays: fronts, non-dominated sorting, crowding, hypervolume.

Kept apart from runs and results (pure numpy, no nasforge types) so that a strategy, the
core's run outcome, a plot and a benchmark all rank points the same way, and so that the
few algorithms that are easy to get subtly wrong can be tested against brute force.

Every function takes ``points`` (n points x m objectives) and ``maximize`` (one flag per
objective: True where larger is better). Points are compared after turning every
objective into one to minimise; NaN never dominates and is never dominated by accident:
callers pass finite points (a run drops failed and infeasible results before it asks).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "crowding_distance",
    "dominates",
    "hypervolume",
    "non_dominated",
    "non_dominated_sort",
]


def _minimised(points: Sequence[Sequence[float]] | np.ndarray, maximize: Sequence[bool]) -> np.ndarray:
    """``points`` as a float (n, m) array in which smaller is better in every column."""
    array = np.asarray(points, dtype=np.float64)
    flags = np.asarray(list(maximize), dtype=bool)
    if array.size == 0:
        return array.reshape(0, len(flags))
    if array.ndim != 2 or array.shape[1] != len(flags):
        raise ValueError(f"points must be (n, {len(flags)}) for {len(flags)} objectives, got {array.shape}")
    return np.where(flags, -array, array)


def dominates(a: Sequence[float], b: Sequence[float], maximize: Sequence[bool]) -> bool:
    """Whether ``a`` is at least as good as ``b`` everywhere and better somewhere."""
    x, y = _minimised([a, b], maximize)
    return bool(np.all(x <= y) and np.any(x < y))


def non_dominated(points: Sequence[Sequence[float]] | np.ndarray, maximize: Sequence[bool]) -> list[int]:
    """Indices (ascending) of the points no other point dominates.

    Equal points do not dominate each other, so duplicates are all kept. Sorting
    lexicographically first means a point can only be dominated by one before it, and
    only the kept points need checking (dominance is transitive): O(n log n + n * front),
    fast enough for a whole tabular benchmark (15,625 cells).
    """
    f = _minimised(points, maximize)
    order = np.lexsort(f.T[::-1]) if len(f) else np.zeros(0, dtype=int)
    kept: list[int] = []
    for i in order:
        if kept:
            front = f[kept]
            if np.any(np.all(front <= f[i], axis=1) & np.any(front < f[i], axis=1)):
                continue
        kept.append(int(i))
    return sorted(kept)


def non_dominated_sort(
    points: Sequence[Sequence[float]] | np.ndarray, maximize: Sequence[bool]
) -> np.ndarray:
    """The front rank of every point: 0 for the non-dominated, 1 for those only the first
    front dominates, and so on (NSGA-II's sorting, by peeling one front at a time)."""
    f = _minimised(points, maximize)
    ranks = np.full(len(f), -1, dtype=int)
    remaining = np.arange(len(f))
    rank = 0
    while len(remaining):
        front = remaining[non_dominated(f[remaining], [False] * f.shape[1])]
        ranks[front] = rank
        remaining = np.setdiff1d(remaining, front, assume_unique=True)
        rank += 1
    return ranks


def crowding_distance(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """NSGA-II's crowding distance of each point within one front.

    Per objective, the points are sorted; the two extremes get infinity (a front keeps its
    ends), every other point the gap between its neighbours over the objective's range.
    An objective on which all points agree adds nothing. Direction does not matter.
    Ties in a column are ordered by index, so the result is deterministic.
    """
    f = np.asarray(points, dtype=np.float64)
    n = len(f)
    distance = np.zeros(n)
    if n == 0:
        return distance
    if n <= 2:
        return np.full(n, np.inf)
    for column in f.T:
        order = np.argsort(column, kind="stable")
        values = column[order]
        span = values[-1] - values[0]
        distance[order[0]] = distance[order[-1]] = np.inf
        if span > 0:
            distance[order[1:-1]] += (values[2:] - values[:-2]) / span
    return distance


def hypervolume(
    points: Sequence[Sequence[float]] | np.ndarray, reference: Sequence[float], maximize: Sequence[bool]
) -> float:
    """The volume dominated by ``points`` and bounded by ``reference``.

    ``reference`` is a point worse than every point of interest in every objective (in
    the objectives' own units and directions); points not strictly better than it in
    every objective add nothing. Exact: a sweep for two objectives, recursive slicing
    along the last objective beyond (fine for the few objectives and small fronts of a
    search; exponential in the number of objectives).
    """
    f = _minimised(points, maximize)
    ref = _minimised([reference], maximize)[0]
    if not np.all(np.isfinite(ref)):
        raise ValueError(f"the reference point must be finite, got {list(reference)}")
    if len(f) == 0:
        return 0.0
    f = f[np.all(np.isfinite(f), axis=1) & np.all(f < ref, axis=1)]
    if len(f) == 0:
        return 0.0
    return float(_hv(f[non_dominated(f, [False] * f.shape[1])], ref))


def _hv(f: np.ndarray, ref: np.ndarray) -> float:
    """Hypervolume of minimisation points all strictly inside ``ref``."""
    m = f.shape[1]
    if m == 1:
        return float(ref[0] - f[:, 0].min())
    if m == 2:
        order = np.lexsort((f[:, 1], f[:, 0]))
        volume, best_y = 0.0, ref[1]
        for x, y in f[order]:
            if y < best_y:
                volume += (ref[0] - x) * (best_y - y)
                best_y = y
        return volume
    order = np.argsort(f[:, -1], kind="stable")
    f = f[order]
    volume = 0.0
    for k in range(len(f)):
        upper = f[k + 1, -1] if k + 1 < len(f) else ref[-1]
        depth = upper - f[k, -1]
        if depth > 0:
            slice_points = f[: k + 1, :-1]
            slice_points = slice_points[non_dominated(slice_points, [False] * (m - 1))]
            volume += depth * _hv(slice_points, ref[:-1])
    return volume

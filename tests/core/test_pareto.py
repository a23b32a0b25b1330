"""nasforge.kernel.pareto against brute force: fronts, sorting ranks, crowding and hypervolume."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasforge.kernel.pareto import (
    crowding_distance,
    dominates,
    hypervolume,
    non_dominated,
    non_dominated_sort,
)


def _brute_front(points: list[tuple[float, ...]], maximize: list[bool]) -> list[int]:
    return [
        i
        for i, p in enumerate(points)
        if not any(dominates(q, p, maximize) for j, q in enumerate(points) if j != i)
    ]


def _brute_dominates(a, b, maximize) -> bool:
    better = [x > y if m else x < y for x, y, m in zip(a, b, maximize, strict=True)]
    worse = [x < y if m else x > y for x, y, m in zip(a, b, maximize, strict=True)]
    return any(better) and not any(worse)


def _brute_hypervolume(points, reference, maximize) -> float:
    """Exact: the union of boxes measured on the grid their coordinates make."""
    if len(points) == 0:
        return 0.0
    f = np.where(maximize, -np.asarray(points, float), np.asarray(points, float))
    ref = np.where(maximize, -np.asarray(reference, float), np.asarray(reference, float))
    f = f[np.all(f < ref, axis=1)]
    if len(f) == 0:
        return 0.0
    axes = [np.unique(np.append(f[:, k], ref[k])) for k in range(f.shape[1])]
    volume = 0.0
    for cell in itertools.product(*(range(len(a) - 1) for a in axes)):
        low = np.array([axes[k][c] for k, c in enumerate(cell)])
        high = np.array([axes[k][c + 1] for k, c in enumerate(cell)])
        if np.any(np.all(f <= low, axis=1)):
            volume += float(np.prod(high - low))
    return volume


coordinates = st.integers(0, 6).map(float)  # small integers: plenty of ties and duplicates


def point_sets(m: int, max_size: int = 14):
    return st.lists(st.tuples(*[coordinates] * m), min_size=0, max_size=max_size)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(points=point_sets(3), maximize=st.lists(st.booleans(), min_size=3, max_size=3))
def test_dominates_and_front_match_brute_force(points, maximize) -> None:
    for a, b in itertools.product(points, repeat=2):
        assert dominates(a, b, maximize) == _brute_dominates(a, b, maximize)
    assert non_dominated(points, maximize) == _brute_front(points, maximize)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(points=point_sets(2, 16), maximize=st.lists(st.booleans(), min_size=2, max_size=2))
def test_sort_ranks_peel_fronts(points, maximize) -> None:
    ranks = non_dominated_sort(points, maximize)
    assert len(ranks) == len(points)
    for i, p in enumerate(points):
        # nothing of the same or a later rank dominates a point; a point of rank r > 0 has a
        # dominator of rank r - 1
        assert not any(
            _brute_dominates(q, p, maximize) for q, r in zip(points, ranks, strict=True) if r >= ranks[i]
        )
        if ranks[i] > 0:
            assert any(
                _brute_dominates(q, p, maximize)
                for q, r in zip(points, ranks, strict=True)
                if r == ranks[i] - 1
            )
    if points:
        assert sorted(np.flatnonzero(ranks == 0).tolist()) == _brute_front(points, maximize)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(
    points=point_sets(2, 12),
    maximize=st.lists(st.booleans(), min_size=2, max_size=2),
)
def test_hypervolume_2d_is_exact(points, maximize) -> None:
    reference = [-1.0 if m else 7.0 for m in maximize]
    assert hypervolume(points, reference, maximize) == pytest.approx(
        _brute_hypervolume(points, reference, maximize)
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    points=point_sets(3, 8),
    maximize=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_hypervolume_3d_is_exact(points, maximize) -> None:
    reference = [-1.0 if m else 7.0 for m in maximize]
    assert hypervolume(points, reference, maximize) == pytest.approx(
        _brute_hypervolume(points, reference, maximize)
    )


def test_hypervolume_4d_and_points_outside_the_reference() -> None:
    rng = np.random.default_rng(0)
    points = rng.integers(0, 5, size=(7, 4)).astype(float)
    reference = [4.0, 4.0, 4.0, 4.0]  # points on the boundary add nothing
    assert hypervolume(points, reference, [False] * 4) == pytest.approx(
        _brute_hypervolume(points, reference, [False] * 4)
    )
    assert hypervolume([[5.0, 5.0]], [4.0, 4.0], [False, False]) == 0.0
    assert hypervolume([], [1.0, 1.0], [True, True]) == 0.0


def test_hypervolume_of_a_known_front() -> None:
    # maximise accuracy, minimise latency: boxes to (0 accuracy, 10 latency)
    points = [[0.9, 8.0], [0.5, 2.0], [0.4, 3.0]]  # the last is dominated
    assert hypervolume(points, [0.0, 10.0], [True, False]) == pytest.approx(0.9 * 2 + 0.5 * 6)


@pytest.mark.slow
def test_front_of_a_large_set_is_quick_and_right() -> None:
    """The tabular benchmark's true front comes from 15,625 points: a sweep, not n^2."""
    rng = np.random.default_rng(1)
    points = rng.random((15_625, 2))
    front = non_dominated(points, [True, False])
    order = np.argsort(-points[:, 0])
    best_y, expected = math.inf, []
    for i in order:  # maximise x: walking down x, a point is on the front when y improves
        if points[i, 1] < best_y:
            expected.append(int(i))
            best_y = points[i, 1]
    assert front == sorted(expected)


def test_crowding_distance() -> None:
    front = [[1.0, 5.0], [2.0, 3.0], [4.0, 2.0], [5.0, 0.0]]
    distance = crowding_distance(front)
    assert math.isinf(distance[0]) and math.isinf(distance[3])
    assert distance[1] == pytest.approx((4 - 1) / 4 + (5 - 2) / 5)
    assert distance[2] == pytest.approx((5 - 2) / 4 + (3 - 0) / 5)
    assert crowding_distance([[1.0, 1.0], [1.0, 1.0]]).tolist() == [math.inf, math.inf]
    same = crowding_distance([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])  # a constant objective adds nothing
    assert same[1] == pytest.approx(1.0)


def test_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="points must be"):
        non_dominated([[1.0, 2.0, 3.0]], [True, True])
    with pytest.raises(ValueError, match="finite"):
        hypervolume([[1.0, 1.0]], [math.inf, 0.0], [True, True])

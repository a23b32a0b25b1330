"""Rank correlations in numpy, so ``correlate`` needs no scipy at run time.

Both follow scipy's definitions (average ranks for ties; Kendall's tau-b), and the tests
check them against scipy where it is installed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def rankdata(values: ArrayLike) -> np.ndarray:
    """1-based ranks, ties sharing their average rank (scipy's ``method="average"``)."""
    a = np.asarray(values, dtype=np.float64).ravel()
    order = np.argsort(a, kind="mergesort")
    sorted_a = a[order]
    # boundaries of runs of equal values
    new_run = np.concatenate(([True], sorted_a[1:] != sorted_a[:-1]))
    run_id = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.concatenate((starts[1:], [len(a)]))
    avg = (starts + ends + 1) / 2.0  # mean of 1-based positions start+1 .. end
    ranks = np.empty(len(a), dtype=np.float64)
    ranks[order] = avg[run_id]
    return ranks


def _check_pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"length mismatch: {a.shape[0]} vs {b.shape[0]}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("NaN in correlation input; map flagged scores to -inf first")
    return a, b


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson correlation of the average ranks (NaN if constant)."""
    a, b = _check_pair(x, y)
    if a.size < 2:
        return float("nan")
    ra, rb = rankdata(a), rankdata(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denom = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denom) if denom > 0 else float("nan")


def kendall(x: ArrayLike, y: ArrayLike, *, block: int = 1024) -> float:
    """Kendall's tau-b over all pairs, in row blocks (O(n^2) time, O(block * n) memory).

    For the sample sizes of correlation studies (up to the 15,625 cells of NAS-Bench-201)
    this takes seconds; exactness and simplicity win over an O(n log n) merge sort.
    """
    a, b = _check_pair(x, y)
    n = a.size
    if n < 2:
        return float("nan")
    # ranks keep the order and the ties but make -inf (flagged scores) subtractable
    a, b = rankdata(a), rankdata(b)
    s = 0.0
    ties_a = ties_b = 0.0
    for start in range(0, n, block):
        sa = np.sign(a[start : start + block, None] - a[None, :])
        sb = np.sign(b[start : start + block, None] - b[None, :])
        s += float((sa * sb).sum())
        ties_a += float((sa == 0).sum())
        ties_b += float((sb == 0).sum())
    # every unordered pair was counted twice; the diagonal added n ties to each
    s /= 2.0
    n0 = n * (n - 1) / 2.0
    n1 = (ties_a - n) / 2.0
    n2 = (ties_b - n) / 2.0
    denom = np.sqrt((n0 - n1) * (n0 - n2))
    return float(s / denom) if denom > 0 else float("nan")

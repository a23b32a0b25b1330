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


def kendall(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b in O(n log n) (Knight, 1966): sort by (x, y), count the pairs tied
    in x, in y and in both, and count discordant pairs as the inversions of y in that
    order (a Fenwick tree over y's ranks). Exact; on the 15,625 cells of NAS-Bench-201 it
    takes a fraction of a second, where comparing all 122 million pairs took ~13 s.
    """
    a, b = _check_pair(x, y)
    n = a.size
    if n < 2:
        return float("nan")
    # ranks keep the order and the ties but make -inf (flagged scores) comparable
    a, b = rankdata(a), rankdata(b)
    order = np.lexsort((b, a))  # by a, ties in a by b: such pairs are never inversions
    a, b = a[order], b[order]
    n0 = n * (n - 1) / 2.0
    n1 = _tied_pairs(a)
    n2 = _tied_pairs(np.sort(b))
    same = np.concatenate(([False], (a[1:] == a[:-1]) & (b[1:] == b[:-1])))
    n3 = _run_pairs(same)
    swaps = _inversions(np.unique(b, return_inverse=True)[1])
    denom = np.sqrt((n0 - n1) * (n0 - n2))
    return float((n0 - n1 - n2 + n3 - 2.0 * swaps) / denom) if denom > 0 else float("nan")


def _run_pairs(continues: np.ndarray) -> float:
    """Pairs within runs, where ``continues[i]`` says element i equals element i - 1."""
    starts = np.flatnonzero(~continues)
    lengths = np.diff(np.concatenate((starts, [continues.size]))).astype(np.float64)
    return float((lengths * (lengths - 1) / 2.0).sum())


def _tied_pairs(sorted_values: np.ndarray) -> float:
    return _run_pairs(np.concatenate(([False], sorted_values[1:] == sorted_values[:-1])))


def _inversions(codes: np.ndarray) -> float:
    """Pairs i < j with codes[i] > codes[j] (codes: 0-based dense ranks), by a Fenwick tree."""
    size = int(codes.max()) + 1 if codes.size else 0
    tree = [0] * (size + 1)
    count = 0
    for seen, code in enumerate(codes.tolist()):
        k, at_most = code + 1, 0
        while k > 0:  # how many earlier codes are <= this one
            at_most += tree[k]
            k -= k & -k
        count += seen - at_most
        k = code + 1
        while k <= size:
            tree[k] += 1
            k += k & -k
    return float(count)

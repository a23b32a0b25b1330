"""Ranking with flagged scores last, and rank aggregation across metrics.

Every consumer of scores (search strategies, ``correlate``, ensembles) must agree that a
NaN, inf or failed score is the worst possible, whatever the metric's direction; this is
the one place that rule lives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from nasforge.tools.scoring.stats import rankdata


def oriented(values: ArrayLike, higher_is_better: bool) -> np.ndarray:
    """Scores turned so that larger is better; non-finite scores become ``-inf``."""
    a = np.asarray(values, dtype=np.float64).ravel().copy()
    bad = ~np.isfinite(a)
    if not higher_is_better:
        a = -a
    a[bad] = -np.inf
    return a


def rank_order(values: ArrayLike, higher_is_better: bool) -> np.ndarray:
    """Indices from best to worst; flagged scores last, ties in input order."""
    return np.argsort(-oriented(values, higher_is_better), kind="stable")


def normalized_ranks(values: ArrayLike, higher_is_better: bool) -> np.ndarray:
    """Ranks scaled to [0, 1], 1 the best; flagged scores tie at the bottom."""
    a = oriented(values, higher_is_better)
    if a.size == 1:
        return np.ones(1) if np.isfinite(a[0]) else np.zeros(1)
    r = rankdata(a)
    return (r - 1.0) / (a.size - 1.0)


def aggregate_ranks(columns: Sequence[ArrayLike], directions: Sequence[bool]) -> np.ndarray:
    """Mean normalised rank across metrics (TE-NAS-style rank sum, scaled to [0, 1]).

    Ranks, not raw values, because proxies live on incomparable scales (synflow spans
    1e30 to 1e60; jacob_cov is a negative log-determinant).
    """
    if len(columns) != len(directions) or not columns:
        raise ValueError("need one direction per column and at least one column")
    parts = [normalized_ranks(c, d) for c, d in zip(columns, directions, strict=True)]
    return np.mean(parts, axis=0)

"""Kendall's tau between two rankings of the same candidates (no SciPy needed for a few dozen)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """tau-b of the paired scores ``a`` and ``b`` (ties allowed); NaN when undefined."""
    if len(a) != len(b):
        raise ValueError(f"kendall_tau needs paired scores, got {len(a)} and {len(b)}")
    concordant = discordant = ties_a = ties_b = 0
    n = len(a)
    for i in range(n):
        for j in range(i + 1, n):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif (da > 0) == (db > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b))
    return (concordant - discordant) / denominator if denominator > 0 else float("nan")

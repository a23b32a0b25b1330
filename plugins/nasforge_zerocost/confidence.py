"""Confidence intervals for the validation figures: how far a sample's ρ can be trusted.

A correlation measured on a few hundred cells moves by several hundredths from sample to
sample (fisher has scored 0.19 to 0.42 on different small samples), so every
measured figure is reported with an interval:

- Spearman's ρ: Fisher's z with the Bonett-Wright variance (1 + ρ²/2)/(n - 3), the usual
  closed form for a rank correlation (no resampling, deterministic);
- anything else (the pairwise vote agreement, a difference of two ρ on the same cells):
  a percentile bootstrap over cells, from a local generator seeded by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def spearman_interval(rho: float, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` interval of Spearman's ρ on ``n`` pairs (Fisher z, Bonett-Wright)."""
    if n < 4 or not math.isfinite(rho):
        return (math.nan, math.nan)
    r = min(max(rho, -0.999999), 0.999999)
    half = _z(level) * math.sqrt((1.0 + r * r / 2.0) / (n - 3))
    z = math.atanh(r)
    return (math.tanh(z - half), math.tanh(z + half))


def bootstrap_interval(
    statistic: Callable[[np.ndarray], float],
    n: int,
    *,
    draws: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of ``statistic(indices)`` over ``draws`` resamples of ``n`` cells.

    ``statistic`` gets an index array (cells drawn with replacement) and returns a float;
    non-finite draws are left out. The generator is local, seeded by ``seed``.
    """
    if draws < 2 or n < 2:
        raise ValueError(f"need at least 2 draws of at least 2 cells, got {draws} x {n}")
    rng = np.random.default_rng(seed)
    values = np.array([statistic(rng.integers(0, n, size=n)) for _ in range(draws)], dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (math.nan, math.nan)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return (float(low), float(high))

"""HNAS's search scores: the realizable and non-realizable objectives (thesis §7.3.3).

Lower is better. Realizable (Cor. 7.1): 1/M, i.e. the plain zero-cost arg-max of M.
Non-realizable (Cor. 7.2, eq. 7.7): κ/M + μ F(M² - ν), the generalisation term plus a
convergence/complexity trade-off whose optimum sits near √ν. Table 7.5's two middle
scenarios are kept too, so each ingredient can be ablated. F is |x| as in the authors'
code (the default, which reproduces Table 7.3) or x² as in the thesis text (t = 1).
"""

from __future__ import annotations

import numpy as np

OBJECTIVES = ("realizable", "trade-off", "kappa", "non-realizable")
PENALTIES = ("abs", "square")
EPS = 1e-6


def penalty(x: np.ndarray, kind: str) -> np.ndarray:
    if kind == "abs":
        return np.abs(x)
    if kind == "square":
        return x * x
    raise ValueError(f"penalty must be one of {PENALTIES}, got {kind!r}")


def hnas_score(
    metric: np.ndarray,
    kappa: np.ndarray,
    *,
    mu: float,
    nu: float,
    objective: str = "non-realizable",
    penalty_kind: str = "abs",
) -> np.ndarray:
    """Scores of a pool (lower is better); NaN inputs score +inf (never selected first)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    m = np.asarray(metric, dtype=np.float64)
    k = np.asarray(kappa, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        base = k / (m + EPS) if objective in ("kappa", "non-realizable") else 1.0 / (m + EPS)
        trade = (
            mu * penalty(m * m - nu, penalty_kind) if objective in ("trade-off", "non-realizable") else 0.0
        )
        score = base + trade
    return np.where(np.isfinite(score), score, np.inf)

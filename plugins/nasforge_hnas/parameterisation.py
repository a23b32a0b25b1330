"""The continuous (μ, ν) plane that BO searches, mapped from the unit square.

The authors' code searches s ∈ [0, 1] with √ν = s·scale and c = log₁₀ μ in fixed
bounds, with ``scale`` and the bounds tuned to their metric magnitudes (5e3 and [-4, 0]
on NAS-Bench-201; the thesis does not give the parameterisation). That is
``mode="paper"``. Our networks, batches and metrics differ, so by default
(``mode="normalised"``) M and κ are divided by their pool medians and the scale is the
largest normalised M of the pool: then κ/M is O(1) on any setting and s sweeps √ν across
the pool's whole range.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
from attrs import validators as v

MODES = ("normalised", "paper")
#: log₁₀ μ bounds by mode: a wide range for median-normalised metrics, or the authors' code's
#: NB201 bounds (tuned to its metric magnitudes; the thesis gives none).
DEFAULT_LOG10_MU = {"normalised": (-3.0, 2.0), "paper": (-4.0, 0.0)}


def _bounds(value: Any) -> tuple[float, float]:
    lo, hi = (float(b) for b in value)
    if not lo < hi:
        raise ValueError(f"log10 mu bounds must be increasing, got {value!r}")
    return lo, hi


@attrs.frozen
class MuNuPlane:
    """Unit-square BO coordinates (s, u) -> (μ, ν), plus the metric normalisation."""

    mode: str = attrs.field(default="normalised", validator=v.in_(MODES))
    #: Defaults to the mode's bounds (:data:`DEFAULT_LOG10_MU`), so "paper" means the code's plane.
    log10_mu: tuple[float, float] = attrs.field(
        default=attrs.Factory(lambda self: DEFAULT_LOG10_MU.get(self.mode, (-3.0, 2.0)), takes_self=True),
        converter=_bounds,
    )
    #: √ν at s = 1 in "paper" mode (5e3 on NB201, 1e2 on DARTS in the authors' code).
    scale: float = attrs.field(default=5e3, converter=float, validator=v.gt(0.0))

    def normaliser(self, metric: np.ndarray, kappa: np.ndarray) -> tuple[float, float, float]:
        """(divisor of M, divisor of κ, scale of √ν) for a pool; identity in paper mode."""
        if self.mode == "paper":
            return 1.0, 1.0, self.scale
        m_div = _median(metric)
        k_div = _median(kappa)
        finite = metric[np.isfinite(metric)] / m_div
        return m_div, k_div, float(finite.max()) if finite.size else 1.0

    def mu_nu(self, point: np.ndarray, scale: float) -> tuple[float, float]:
        """(μ, ν) of a unit-square point (s, u)."""
        s, u = float(point[0]), float(point[1])
        lo, hi = self.log10_mu
        mu = 10.0 ** (lo + u * (hi - lo))
        return mu, (s * scale) ** 2

    def unit_of_log10_mu(self, log10_mu: float) -> float:
        lo, hi = self.log10_mu
        return float(np.clip((log10_mu - lo) / (hi - lo), 0.0, 1.0))


def _median(values: np.ndarray) -> float:
    finite = values[np.isfinite(values) & (values > 0)]
    return float(np.median(finite)) if finite.size else 1.0

"""The constraint constant ν of NASI: fixed (NASI-FIX) or adaptive (NASI-ADA), App. B.1.

ν stands for γ n / η, the trace at which a learning rate η stops being trainable; the
paper treats it as a hyper-parameter. FIX calibrates it once as the mean proxy of N
random architectures (eq. 40), aiming at "medium complexity"; ADA starts from a large
ν₀ and tracks the running mean of the proxies sampled so far, ν₀ counted as one
pseudo-sample (eq. 41: ν₁ = ν₀, ν_t = (ν₀ + Σ_{τ<t} Θ̃_τ) / t).
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class FixedConstraint:
    """ν_t = ν for every step."""

    mode = "fix"

    def __init__(self, nu: float) -> None:
        if not (math.isfinite(nu) and nu > 0):
            raise ValueError(f"nu must be a positive finite number, got {nu}")
        self.nu = float(nu)

    @classmethod
    def calibrated(cls, proxies: Iterable[float]) -> FixedConstraint:
        """Eq. 40: the mean proxy of random architectures."""
        values = [float(p) for p in proxies]
        if not values:
            raise ValueError("calibration needs at least one proxy value")
        return cls(sum(values) / len(values))

    def value(self) -> float:
        return self.nu

    def observe(self, proxy: float) -> None:
        """Fixed ν ignores the samples."""


class AdaptiveConstraint:
    """Eq. 41: the running mean of ν₀ and the proxies observed before this step."""

    mode = "ada"

    def __init__(self, nu0: float) -> None:
        if not (math.isfinite(nu0) and nu0 > 0):
            raise ValueError(f"nu0 must be a positive finite number, got {nu0}")
        self.nu0 = float(nu0)
        self._sum = float(nu0)
        self._count = 1

    def value(self) -> float:
        return self._sum / self._count

    def observe(self, proxy: float) -> None:
        if math.isfinite(proxy):
            self._sum += float(proxy)
            self._count += 1

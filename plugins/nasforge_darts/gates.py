"""PR-DARTS's stochastic binary gates: a stretched, hard-clipped binary Concrete.

Each op gets its own gate with log-odds ``beta`` (no softmax across an edge). A gate is
``min(1, max(0, a + (b - a) * sigmoid((log u - log(1-u) + beta) / tau)))``; stretching past
[0, 1] and clipping puts real probability mass on exactly 0 and exactly 1, so ops can be
switched off during search (and then cost nothing) while ``beta`` still gets gradients.
"""

from __future__ import annotations

import math

import attrs
import torch
from attrs import validators as v


@attrs.frozen
class HardConcreteGate:
    """The gate distribution with stretch interval ``(a, b)``, ``a < 0 < 1 < b``."""

    a: float = attrs.field(default=-0.1, converter=float, validator=v.lt(0.0))
    b: float = attrs.field(default=1.1, converter=float, validator=v.gt(1.0))

    @property
    def log_ratio(self) -> float:
        """``ln(-a / b)``: Theorem 3's shift of the log-odds per unit temperature."""
        return math.log(-self.a / self.b)

    def sample(
        self, beta: torch.Tensor, tau: float, *, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """One reparameterised draw per entry of ``beta`` (differentiable in ``beta``)."""
        return self.from_noise(beta, tau, self.noise(beta, generator=generator))

    def noise(self, beta: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        """The uniform draws ``u`` of one sample, shaped like ``beta`` (on its device)."""
        u = torch.rand(beta.shape, generator=generator, dtype=beta.dtype, device="cpu")
        return u.to(beta.device).clamp(1e-6, 1.0 - 1e-6)

    def from_noise(self, beta: torch.Tensor, tau: float, u: torch.Tensor) -> torch.Tensor:
        """The gate for fixed noise ``u``: a deterministic function of ``beta`` (the second-order
        architecture gradient differentiates it at several weight points with one draw)."""
        if tau <= 0:
            raise ValueError(f"temperature must be positive, got {tau}")
        relaxed = torch.sigmoid((torch.log(u) - torch.log1p(-u) + beta) / tau)
        return (self.a + (self.b - self.a) * relaxed).clamp(0.0, 1.0)

    def prob_nonzero(self, beta: torch.Tensor, tau: float) -> torch.Tensor:
        """Theorem 3: ``P(g != 0) = sigmoid(beta - tau * ln(-a / b))``."""
        return torch.sigmoid(beta - tau * self.log_ratio)

    def prob_one(self, beta: torch.Tensor, tau: float) -> torch.Tensor:
        """``P(g = 1) = sigmoid(beta - tau * ln((1 - a) / (b - 1)))``."""
        return torch.sigmoid(beta - tau * math.log((1.0 - self.a) / (self.b - 1.0)))

    def deterministic(self, beta: torch.Tensor) -> torch.Tensor:
        """Noise-free gate for evaluating the supernet (Louizos et al.'s estimator)."""
        return (self.a + (self.b - self.a) * torch.sigmoid(beta)).clamp(0.0, 1.0)

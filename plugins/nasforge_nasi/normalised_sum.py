"""The closed-form NASI update Δ* ≈ (ξ/T) Σ_t G_t / max_{s≤t} ‖G_s‖ (paper eq. 18).

Linearising the expected objective at α₀ = 0 turns the search into one trust-region
step whose direction is the mean sampled gradient (eq. 17); dividing each G_t by the
running maximum of the norms is the paper's AMSGrad-like estimate of that direction,
and down-weights later samples as a learning-rate decay would. No optimiser is involved.
"""

from __future__ import annotations

import torch


class NormalisedSum:
    """Accumulates eq. 18 over flat gradient vectors.

    A sample is skipped while every norm seen so far is zero (our guard: μ = 1, which App. B.1
    allows, with all samples above ν, or degenerate cells, would otherwise divide by zero); skipped
    samples still count in T, as they do in the paper's average.
    """

    def __init__(self, size: int, *, xi: float = 1.0, dtype: torch.dtype = torch.float64) -> None:
        if xi <= 0:
            raise ValueError(f"xi must be > 0, got {xi}")
        self.xi = xi
        self.total = torch.zeros(size, dtype=dtype)
        self.count = 0
        self.max_norm = 0.0
        self.skipped = 0

    def add(self, grad: torch.Tensor) -> float:
        """Add one G_t (any shape, flattened); returns its L2 norm."""
        g = grad.detach().reshape(-1).to(self.total.dtype).cpu()
        if g.numel() != self.total.numel():
            raise ValueError(f"gradient has {g.numel()} entries, expected {self.total.numel()}")
        norm = float(g.norm())
        self.count += 1
        self.max_norm = max(self.max_norm, norm)
        if self.max_norm > 0.0:
            self.total += g / self.max_norm
        else:
            self.skipped += 1
        return norm

    def delta(self) -> torch.Tensor:
        """Δ* = (ξ/T) Σ_t G_t / max_{s≤t} ‖G_s‖ (zeros before the first sample)."""
        if self.count == 0:
            return torch.zeros_like(self.total)
        return self.total * (self.xi / self.count)

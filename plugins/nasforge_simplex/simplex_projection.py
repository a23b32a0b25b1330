"""Euclidean projection onto the probability simplex, row by row.

Projected gradient is the third way to keep architecture parameters on the simplex (beside
softmax logits and exponentiated gradient); unlike the other two it reaches the boundary,
setting weights exactly to zero, which is why the paper's A2 (interior: every alpha_i in (0, 1))
is stronger than needed: only ``alpha_i < 1`` is (our derivation).
"""

from __future__ import annotations

import torch


def project_to_simplex(a: torch.Tensor) -> torch.Tensor:
    """The nearest point of the simplex to each row of ``a`` (sort-based, exact).

    ``u = sort(a, desc)``, ``c = cumsum(u) - 1``, ``rho = max{j : u_j - c_j / j > 0}``,
    ``tau = c_rho / rho``, result ``max(a - tau, 0)`` (Held et al.; Duchi et al. 2008).
    """
    if a.dim() == 0:
        raise ValueError("project_to_simplex needs at least one dimension")
    u, _ = torch.sort(a, dim=-1, descending=True)
    c = torch.cumsum(u, dim=-1) - 1.0
    j = torch.arange(1, a.shape[-1] + 1, dtype=a.dtype, device=a.device)
    positive = (u - c / j) > 0
    # the last index where the condition holds (it always holds at j = 1)
    rho = (
        positive.shape[-1] - 1 - torch.flip(positive, dims=(-1,)).to(torch.int64).argmax(dim=-1, keepdim=True)
    )
    tau = c.gather(-1, rho) / (rho + 1).to(a.dtype)
    return torch.clamp(a - tau, min=0.0)

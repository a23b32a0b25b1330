"""The continuous relaxation SVGD-RD samples from (thesis §5.3.4, eqs. 5.8 and 5.9).

Each decision d gets a continuous vector o_d in R^{K_d}; the relaxed posterior is a
product over decisions of mixtures sum_o p_alpha(o) N(o_d | h_o, Sigma), h_o one-hot and
Sigma = K_d * I, a covariance (the literal reading of "identity scaled by |O|"; our check
shows it matters). Normalisers are dropped (SVGD needs none). A particle is [D, Kmax],
padding held at zero (its gradient is zero and the RBF repulsion between equal zeros is zero,
so it stays there). The projection back to an architecture, argmin_o ||o_d - h_o||, is
the arg-max of each decision's coordinates.
"""

from __future__ import annotations

import torch

from nasforge_nesbs.decisions import Assignment
from nasforge_nesbs.posterior import NEG_INF, ArchPosterior


def relaxed_log_prob(x: torch.Tensor, posterior: ArchPosterior) -> torch.Tensor:
    """log p_hat(x) for particles [n, D, Kmax] -> [n]."""
    mask = posterior.mask.to(x.device)
    kmax = mask.shape[1]
    logpi = posterior.log_probs().to(x)  # [D, K], padding -inf
    var = mask.sum(-1).to(x)  # Sigma = K_d I
    eye = torch.eye(kmax, dtype=x.dtype, device=x.device)
    diff = (x * mask)[:, :, None, :] - eye[None, None]  # [n, D, o, coord]
    sq = (diff**2 * mask[None, :, None, :]).sum(-1)  # only a decision's own coordinates
    comp = logpi[None] - sq / (2 * var[None, :, None])
    comp = comp.masked_fill(~mask[None], NEG_INF)
    return torch.logsumexp(comp, dim=-1).sum(-1)


def project(x: torch.Tensor, posterior: ArchPosterior) -> list[Assignment]:
    """The architecture nearest each particle (eq. 5.9): per decision, the arg-max coordinate."""
    mask = posterior.mask.to(x.device)
    scores = x.masked_fill(~mask[None], NEG_INF)
    return [tuple(int(k) for k in row) for row in scores.argmax(-1)]


def initial_particles(posterior: ArchPosterior, n: int, generator: torch.Generator) -> torch.Tensor:
    """o ~ p_alpha, then x_d = h_o + N(0, K_d I); padding zero. [n, D, Kmax], float64.

    Our choice: the thesis says only that the particles are "randomly initialized"."""
    mask = posterior.mask
    picks = posterior.sample(n, generator)
    x = torch.zeros((n, *mask.shape), dtype=torch.float64)
    for i, a in enumerate(picks):
        x[i, range(len(a)), list(a)] = 1.0
    std = mask.sum(-1).double().sqrt()[None, :, None]
    noise = torch.randn(x.shape, generator=generator, dtype=torch.float64)
    return (x + std * noise) * mask[None]

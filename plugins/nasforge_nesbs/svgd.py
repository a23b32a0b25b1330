"""Stein variational gradient descent with regularised diversity (SVGD-RD, thesis Prop. 5.1).

SVGD moves n particles along the kernelised Stein direction, a pull towards high density
plus a push apart from each other. NESBS adds ``n * delta * E[k(x, x')]`` to the KL
objective; one proximal step of it (App. B, eqs. B.5 to B.10, x_j held constant) gives

    phi(x_i) = 1/n sum_j [ k(x_j, x_i) grad log p(x_j) + grad_{x_j} k(x_j, x_i)
                           - delta * grad_{x_i} k(x_j, x_i) ]

so ``delta`` is an explicit diversity knob. With an RBF kernel the last term equals the
repulsive one, and SVGD-RD is SVGD with repulsion scaled by (1 + delta): delta = 0 is
plain SVGD, delta = -1 removes the repulsion (particles collapse onto modes), delta < -1
attracts. :func:`rbf_direction` is that closed form; :func:`generic_direction` computes
the proposition literally by autograd for any kernel, and the tests hold one to the other.

Steps follow §5.3.4 (Alg. 5.3, Prop. 5.1 and eq. B.9 scale the step differently): -phi is
fed as the gradient of an SGD optimiser (thesis: lr 0.1, momentum 0.9, L = 1000). The
bandwidth is the median heuristic (Liu & Wang, 2016; the thesis gives none),
a constant within each iteration.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

#: log p of a batch of particles [n, ...] -> [n] (unnormalised is fine).
LogProb = Callable[[torch.Tensor], torch.Tensor]
#: A kernel k(a, b) of two particles (flattened) -> scalar, differentiable in both.
Kernel = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def median_bandwidth(sq_dists: torch.Tensor) -> float:
    """h = med(||x_i - x_j||^2) / log(n + 1) over pairs i < j; 1 for n = 1 or collapsed particles."""
    n = sq_dists.shape[0]
    if n < 2:
        return 1.0
    iu = torch.triu_indices(n, n, offset=1)
    h = float(sq_dists[iu[0], iu[1]].median()) / math.log(n + 1)
    return h if h > 0 and math.isfinite(h) else 1.0


def rbf_direction(
    x: torch.Tensor, grad_log_p: torch.Tensor, delta: float, bandwidth: float | None = None
) -> torch.Tensor:
    """phi of Prop. 5.1 with k(a, b) = exp(-||a - b||^2 / h), for every particle at once.

    ``x`` and ``grad_log_p`` are [n, ...]; returns phi of the same shape. ``bandwidth``
    None takes the median heuristic.
    """
    flat = x.detach().reshape(x.shape[0], -1)
    g = grad_log_p.detach().reshape(x.shape[0], -1)
    sq = torch.cdist(flat, flat).pow(2)
    h = median_bandwidth(sq) if bandwidth is None else float(bandwidth)
    k = torch.exp(-sq / h)  # symmetric: k[j, i] = k(x_j, x_i)
    drive = k.T @ g
    repulse = (2.0 / h) * (flat * k.sum(0)[:, None] - k.T @ flat)  # sum_j grad_{x_j} k(x_j, x_i)
    phi = (drive + (1.0 + delta) * repulse) / flat.shape[0]
    return phi.reshape(x.shape)


def rbf_kernel(bandwidth: float) -> Kernel:
    """k(a, b) = exp(-||a - b||^2 / bandwidth), for :func:`generic_direction`."""

    def k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-((a - b) ** 2).sum() / bandwidth)

    return k


def generic_direction(
    x: torch.Tensor, grad_log_p: torch.Tensor, delta: float, kernel: Kernel
) -> torch.Tensor:
    """phi of Prop. 5.1 for any differentiable kernel, term by term with autograd.

    O(n^2) kernel evaluations: meant for small n and for checking closed forms.
    """
    n = x.shape[0]
    flat = x.detach().reshape(n, -1)
    g = grad_log_p.detach().reshape(n, -1)
    phi = torch.zeros_like(flat)
    for i in range(n):
        for j in range(n):
            xj = flat[j].clone().requires_grad_(True)
            xi = flat[i].clone().requires_grad_(True)
            kji = kernel(xj, xi)
            d_xj, d_xi = torch.autograd.grad(kji, (xj, xi))
            phi[i] += kji.detach() * g[j] + d_xj - delta * d_xi
    return (phi / n).reshape(x.shape)


def log_prob_grad(log_prob: LogProb, x: torch.Tensor) -> torch.Tensor:
    """grad_x log p(x) for each particle (autograd through ``log_prob``)."""
    xg = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(log_prob(xg).sum(), xg)
    return g


def svgd_rd(
    log_prob: LogProb,
    init: torch.Tensor,
    *,
    delta: float = 0.0,
    steps: int = 1000,
    lr: float = 0.1,
    momentum: float = 0.9,
    bandwidth: float | None = None,
) -> torch.Tensor:
    """Move the particles ``init`` [n, ...] for ``steps`` SVGD-RD iterations; returns them.

    Deterministic: no random draw happens here (the caller's ``init`` holds the randomness).
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    x = init.detach().clone().requires_grad_(True)
    opt = torch.optim.SGD([x], lr=lr, momentum=momentum)
    for _ in range(steps):
        phi = rbf_direction(x, log_prob_grad(log_prob, x), delta, bandwidth)
        opt.zero_grad(set_to_none=False)
        x.grad = -phi  # ascent on phi (thesis §5.3.4)
        opt.step()
    return x.detach()

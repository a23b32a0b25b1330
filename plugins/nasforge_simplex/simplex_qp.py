"""The best simplex point at fixed shared weights: ``argmin_alpha 1/2 |y - sum alpha_i g_i|^2``.

The theory rests on the paper's A3 (realizability); our derivation replaces it by stationarity:
at the minimiser over the simplex, with the weights fixed, ``L_i - L_alpha = (1 -
alpha_i)^2 D_i`` for every candidate alpha keeps. This solves that small convex QP
exactly, by its KKT conditions on each support (2^h - 1 linear systems: h is the number
of candidates of one edge, a handful), which is what a test of that identity to 1e-9 needs.
"""

from __future__ import annotations

import itertools

import torch

#: Largest candidate count solved by enumerating supports (2^h systems).
MAX_CANDIDATES = 14


def stationary_alpha(outputs: torch.Tensor, targets: torch.Tensor, *, tol: float = 1e-12) -> torch.Tensor:
    """The simplex point minimising the squared loss of ``sum alpha_i g_i`` (float64).

    ``outputs`` is ``(n, h)`` or ``(n, h, m)``, ``targets`` ``(n,)`` or ``(n, m)``.
    """
    g = outputs.detach().double()
    if g.dim() == 2:
        g = g[:, :, None]
    t = targets.detach().double().reshape(g.shape[0], -1)
    n, h, _ = g.shape
    if h > MAX_CANDIDATES:
        raise ValueError(
            f"stationary_alpha enumerates supports; {h} candidates are too many (max {MAX_CANDIDATES})"
        )
    flat = g.permute(1, 0, 2).reshape(h, -1)
    gram = flat @ flat.T / n
    b = flat @ t.reshape(-1) / n
    best: tuple[float, torch.Tensor] | None = None
    for size in range(1, h + 1):
        for support in itertools.combinations(range(h), size):
            s = list(support)
            kkt = torch.zeros((size + 1, size + 1), dtype=torch.float64)
            kkt[:size, :size] = gram[s][:, s]
            kkt[:size, size] = 1.0
            kkt[size, :size] = 1.0
            rhs = torch.cat([b[s], torch.ones(1, dtype=torch.float64)])
            try:
                sol = torch.linalg.solve(kkt, rhs)
            except RuntimeError:  # singular on this support: another support holds the optimum
                continue
            alpha = torch.zeros(h, dtype=torch.float64)
            alpha[s] = sol[:size]
            if bool((alpha < -tol).any()):
                continue
            alpha = alpha.clamp_min(0.0)
            # KKT: grad + lam = 0 on the support (the system solved), grad + lam >= 0 off it
            grad = gram @ alpha - b
            lam = sol[size]
            if bool((grad + lam < -tol * max(1.0, float(grad.abs().max()))).any()):
                continue  # an op outside the support would lower the loss
            value = float(0.5 * alpha @ gram @ alpha - b @ alpha)
            if best is None or value < best[0]:
                best = (value, alpha / alpha.sum())
    if best is None:
        raise ArithmeticError("no KKT point found; the outputs are degenerate")
    return best[1]

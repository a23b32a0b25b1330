"""Acquisition functions over the unit cube and their seeded maximiser.

Expected improvement (the HNAS code's choice on NAS-Bench-201) and the upper confidence
bound (its DARTS choice), for maximisation. The maximiser follows bayes_opt 1.x in
spirit: many random points, then gradient refinement of the best few, all seeded so a
BO step is a function of its history alone (which makes HNAS resumable by replay).
"""

from __future__ import annotations

import math
from typing import Protocol

import torch


class Surrogate(Protocol):
    """What the acquisitions read of a fitted model: posterior mean and std at points."""

    def predict(self, xq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


ACQUISITIONS = ("ei", "ucb")
_SQRT2 = math.sqrt(2.0)


def expected_improvement(mean: torch.Tensor, std: torch.Tensor, best: float, xi: float = 0.0) -> torch.Tensor:
    """E[max(0, f - best - ξ)] under N(mean, std²); max(0, mean - best - ξ) where std = 0."""
    gap = mean - best - xi
    safe = std.clamp_min(1e-12)
    z = gap / safe
    cdf = 0.5 * (1.0 + torch.erf(z / _SQRT2))
    pdf = torch.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    ei = gap * cdf + safe * pdf
    return torch.where(std > 1e-12, ei, gap.clamp_min(0.0))


def upper_confidence_bound(mean: torch.Tensor, std: torch.Tensor, kappa: float = 2.576) -> torch.Tensor:
    return mean + kappa * std


def acquisition_values(
    gp: Surrogate, x: torch.Tensor, kind: str, *, best: float, xi: float = 0.0, kappa: float = 2.576
) -> torch.Tensor:
    mean, std = gp.predict(x)
    if kind == "ei":
        return expected_improvement(mean, std, best, xi)
    if kind == "ucb":
        return upper_confidence_bound(mean, std, kappa)
    raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {kind!r}")


def maximise(
    gp: Surrogate,
    kind: str,
    *,
    dims: int,
    best: float,
    generator: torch.Generator,
    n_random: int = 10_000,
    n_refine: int = 10,
    steps: int = 30,
    xi: float = 0.0,
    kappa: float = 2.576,
) -> torch.Tensor:
    """The point of [0, 1]^dims with the largest acquisition value found."""
    cand = torch.rand(n_random, dims, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        values = acquisition_values(gp, cand, kind, best=best, xi=xi, kappa=kappa)
    top = values.topk(min(n_refine, n_random)).indices
    x, v = _refine(gp, cand[top], kind, best=best, xi=xi, kappa=kappa, steps=steps)
    i = int(v.argmax())
    return x[i] if float(v[i]) > float(values[top[0]]) else cand[top[0]].clone()


def _refine(
    gp: Surrogate, starts: torch.Tensor, kind: str, *, best: float, xi: float, kappa: float, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Projected gradient ascent from every start at once; keeps each one's best point."""
    x = starts.clone().requires_grad_(True)
    opt = torch.optim.Adam([x], lr=0.02)
    best_x = starts.clone()
    best_v = torch.full((starts.shape[0],), -math.inf, dtype=torch.float64)
    for _ in range(steps):
        opt.zero_grad()
        values = acquisition_values(gp, x, kind, best=best, xi=xi, kappa=kappa)
        with torch.no_grad():
            better = values.detach() > best_v
            best_x[better] = x.detach()[better]
            best_v = torch.where(better, values.detach(), best_v)
        (-values.sum()).backward()
        opt.step()
        with torch.no_grad():
            x.clamp_(0.0, 1.0)
    return best_x, best_v

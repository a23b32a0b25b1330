"""The loss landscape around a network's weights, along filter-normalised directions (§4.3.2.1).

The chapter plots ``s(a, b) = mean_i f_i(w* + a d1 + b d2)`` around trained weights w* and
finds the widest, shallowest cell's landscape the smoothest, with the widest near-convex
region. The thesis says Gaussian directions; the authors' plots (their fork of Li et
al.'s code) use *filter-normalised* ones with biases and BatchNorm ignored, the default
here (Li et al. 2018): each filter (slice along the first dimension) of a random
direction is rescaled to the norm of the same filter of the weights, and 1-D parameters
get no direction, so the plot does not depend on how a layer's weights are scaled.

BatchNorm runs in eval mode (running statistics are never perturbed or updated); the
grid's centre is the plain eval loss. Directions come from their own seeded generator.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.seeding import seeded_generator

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def filter_normalised_direction(model: nn.Module, generator: torch.Generator) -> list[torch.Tensor]:
    """One random direction per trainable parameter (zeros for biases and BatchNorm)."""
    out = []
    for p in model.parameters():
        if not p.requires_grad or p.dim() <= 1:
            out.append(torch.zeros_like(p))
            continue
        d = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
        w_norm = p.detach().flatten(1).norm(dim=1)
        d_norm = d.flatten(1).norm(dim=1).clamp_min(1e-12)
        out.append(d * (w_norm / d_norm).view(-1, *([1] * (p.dim() - 1))))
    return out


@attrs.frozen
class Surface:
    """Losses on a grid: ``losses[i][j]`` at ``(alphas[j], betas[i])``."""

    alphas: tuple[float, ...] = attrs.field(converter=to_tuple)
    betas: tuple[float, ...] = attrs.field(converter=to_tuple)
    losses: tuple[tuple[float, ...], ...] = attrs.field(converter=lambda rows: tuple(tuple(r) for r in rows))
    centre: float
    cosine: float

    @property
    def sharpness(self) -> float:
        """Mean rise of the loss over the grid relative to the centre (a smoothness summary)."""
        values = [v for row in self.losses for v in row]
        return sum(values) / len(values) - self.centre

    def to_json(self) -> dict[str, object]:
        return {
            "alphas": list(self.alphas),
            "betas": list(self.betas),
            "losses": [list(r) for r in self.losses],
            "centre": self.centre,
            "cosine": self.cosine,
            "sharpness": self.sharpness,
        }


def _grid(steps: int, span: float) -> list[float]:
    if steps < 2:
        return [0.0]
    return [-span + 2 * span * k / (steps - 1) for k in range(steps)]


@torch.no_grad()
def surface(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    steps: int = 11,
    span: float = 1.0,
    seed: int = 123,
    loss: Loss = F.cross_entropy,
    batch_size: int = 512,
) -> Surface:
    """The loss on a ``steps x steps`` grid over ``[-span, span]^2`` around the current weights.

    The weights are restored afterwards, and so is the module's train/eval mode.
    """
    gen = seeded_generator(seed)
    d1 = filter_normalised_direction(model, gen)
    d2 = filter_normalised_direction(model, gen)
    flat1 = torch.cat([d.flatten() for d in d1])
    flat2 = torch.cat([d.flatten() for d in d2])
    cosine = float(flat1 @ flat2 / (flat1.norm() * flat2.norm()).clamp_min(1e-12))
    params = list(model.parameters())
    saved = [p.detach().clone() for p in params]
    was_training = model.training
    model.eval()

    def mean_loss() -> float:
        total = 0.0
        for start in range(0, len(x), batch_size):
            xb, yb = x[start : start + batch_size], y[start : start + batch_size]
            total += float(loss(model(xb), yb)) * len(xb)
        return total / len(x)

    grid = _grid(steps, span)
    rows = []
    try:
        for b in grid:
            row = []
            for a in grid:
                for p, w, u, v in zip(params, saved, d1, d2, strict=True):
                    p.copy_(w + a * u + b * v)
                row.append(mean_loss())
            rows.append(row)
        for p, w in zip(params, saved, strict=True):
            p.copy_(w)
        centre = mean_loss()
    finally:
        for p, w in zip(params, saved, strict=True):
            p.copy_(w)
        model.train(was_training)
    return Surface(grid, grid, rows, centre, cosine)

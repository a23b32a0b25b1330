"""Drop-path: drop a whole op's output per sample, the regulariser DARTS-family cells use."""

from __future__ import annotations

import torch


def drop_path(x: torch.Tensor, drop_prob: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Zero each sample's ``x`` with probability ``drop_prob``, rescaling the survivors.

    Rescaling by ``1 / keep`` keeps the expected output unchanged, so evaluation (no drop)
    sees the same scale as training. Without ``generator`` the mask comes from the
    generator of the enclosing :class:`nasforge.kernel.seeding.LocalRandomness` block (how the
    short-train evaluator trains), else from torch's default one.
    """
    if not 0.0 <= drop_prob < 1.0:
        raise ValueError(f"drop_prob must be in [0, 1), got {drop_prob}")
    if drop_prob == 0.0:
        return x
    keep = 1.0 - drop_prob
    mask = torch.empty((x.shape[0],) + (1,) * (x.dim() - 1), device=x.device, dtype=x.dtype)
    mask.bernoulli_(keep, generator=generator)
    return x * mask / keep

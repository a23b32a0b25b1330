"""Cutout (DeVries & Taylor, 2017): zero one random square per image, the CIFAR regulariser
every DARTS-family evaluation uses (length 16 on 32x32 images).

As in the DARTS code, the square's centre is uniform over the whole image, so a square
near the border is clipped and covers less; it is applied after normalisation, so the
cut-out pixels are 0 (the data mean), on every channel alike. The centres come from an
explicit generator (on the CPU, so a run draws the same squares on any device).
"""

from __future__ import annotations

import torch


def cutout(x: torch.Tensor, length: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``x`` (N, C, H, W) with one ``length`` x ``length`` square per image set to 0.

    Returns a new tensor (``x`` is untouched); ``length=0`` returns ``x`` itself.
    """
    if length < 0:
        raise ValueError(f"cutout length must be >= 0, got {length}")
    if length == 0 or x.shape[0] == 0:
        return x
    if x.dim() != 4:
        raise ValueError(f"cutout expects a (N, C, H, W) batch, got shape {tuple(x.shape)}")
    n, _, h, w = x.shape
    cy = torch.randint(0, h, (n,), generator=generator).to(x.device)
    cx = torch.randint(0, w, (n,), generator=generator).to(x.device)
    half = length // 2
    rows = torch.arange(h, device=x.device)
    cols = torch.arange(w, device=x.device)
    # DARTS: y1 = clip(cy - L//2), y2 = clip(cy + L//2), rows y1 <= r < y2 (so L even: L x L)
    in_rows = (rows[None, :] >= (cy - half)[:, None]) & (rows[None, :] < (cy + half)[:, None])
    in_cols = (cols[None, :] >= (cx - half)[:, None]) & (cols[None, :] < (cx + half)[:, None])
    square = in_rows[:, :, None] & in_cols[:, None, :]  # (N, H, W)
    return x.masked_fill(square[:, None, :, :], 0.0)


__all__ = ["cutout"]

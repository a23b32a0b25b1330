"""Image augmentation for a batch in memory: random shifts and mirroring, from one generator.

The standard "pad and crop" (CIFAR's 4 pixels, DARTS's train.py) is a shift of each image
by a random offset with zeros shifted in; done here for a whole batch at once by
indexing, so it costs one gather, not a Python loop per image. Every draw comes from the
caller's generator (on the CPU, whatever device the batch is on), so a training run with
the same seed sees the same augmented images, also after a resume.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def shift_images(x: torch.Tensor, rows: int, cols: int, *, generator: torch.Generator) -> torch.Tensor:
    """Each image of ``x`` (``N x C x H x W``) moved by its own offset in ``[-rows, rows]``
    x ``[-cols, cols]``, zeros filling what was moved in; ``x`` unchanged when both are 0."""
    if rows == 0 and cols == 0:
        return x
    n, channels, height, width = x.shape
    padded = F.pad(x, (cols, cols, rows, rows))
    down = torch.randint(0, 2 * rows + 1, (n,), generator=generator).to(x.device)
    right = torch.randint(0, 2 * cols + 1, (n,), generator=generator).to(x.device)
    row_index = down[:, None] + torch.arange(height, device=x.device)[None, :]  # N x H
    col_index = right[:, None] + torch.arange(width, device=x.device)[None, :]  # N x W
    return padded[
        torch.arange(n, device=x.device)[:, None, None, None],
        torch.arange(channels, device=x.device)[None, :, None, None],
        row_index[:, None, :, None],
        col_index[:, None, None, :],
    ]


def mirror_images(x: torch.Tensor, *, generator: torch.Generator) -> torch.Tensor:
    """Each image of ``x`` mirrored left-right with probability one half."""
    flip = (torch.rand(x.shape[0], generator=generator) < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], x.flip(-1), x)

"""Small deterministic networks for backend tests (no plugin needed)."""

from __future__ import annotations

import torch
from torch import nn


def small_cnn(seed: int = 0, bn: bool = True, classes: int = 5) -> nn.Module:
    torch.manual_seed(seed)
    norm = (lambda c: nn.BatchNorm2d(c)) if bn else (lambda c: nn.Identity())
    return nn.Sequential(
        nn.Conv2d(3, 6, 3, padding=1),
        norm(6),
        nn.ReLU(),
        nn.Conv2d(6, 6, 3, padding=1, bias=False),
        norm(6),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(6, classes),
    )


def small_batch(n: int = 6, classes: int = 5, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 6, 6, generator=gen), torch.randint(0, classes, (n,), generator=gen)

"""Auxiliary classifier towers attached after the second reduction cell.

They only feed an extra training loss, so parameter counts exclude them (the DARTS
convention behind the published 3.3M / 3.4M figures) and inference never runs them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class AuxiliaryHead(nn.Module):
    """ReLU, 5x5 average pool, 1x1 conv to 128, 2x2 conv to 768, linear classifier.

    ``pool_stride`` is 3 for CIFAR (8x8 features) and 2 for ImageNet (7x7). The ImageNet
    tower has no BN after the 768-wide conv, as in the DARTS experiments. Inputs smaller
    than the pool window (tiny images such as 8x8 digits) are average-pooled to 2x2.
    """

    def __init__(self, channels: int, num_classes: int, *, pool_stride: int, bn_768: bool) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(5, stride=pool_stride, padding=0, count_include_pad=False)
        layers: list[nn.Module] = [
            nn.Conv2d(channels, 128, 1, bias=False),
            nn.BatchNorm2d(128),
            nn.ReLU(inplace=True),
            nn.Conv2d(128, 768, 2, bias=False),
        ]
        if bn_768:
            layers.append(nn.BatchNorm2d(768))
        layers.append(nn.ReLU(inplace=True))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(768, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(x)
        x = self.pool(x) if min(x.shape[-2:]) >= 5 else F.adaptive_avg_pool2d(x, 2)
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1)
        return self.classifier(x.flatten(1))

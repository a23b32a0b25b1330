"""The three candidate ops of a hello cell; every one keeps the channels and the size."""

from __future__ import annotations

from torch import nn


def make_op(name: str, channels: int, *, affine: bool = True) -> nn.Module:
    """``conv3x3`` (ReLU, conv, BN), ``skip`` (identity) or ``avg_pool`` (3x3, stride 1)."""
    if name == "conv3x3":
        return nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels, affine=affine),
        )
    if name == "skip":
        return nn.Identity()
    if name == "avg_pool":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    raise ValueError(f"unknown hello op {name!r}")

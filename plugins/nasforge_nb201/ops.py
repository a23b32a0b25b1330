"""The five candidate operations of a NAS-Bench-201 edge.

They follow the benchmark's definitions exactly (ReLU before the convolution, BN after;
average pooling that ignores padding) because parameter counts, FLOPs and trained
accuracies are only comparable with the table when the ops match. Every op keeps the
channel count and spatial size: in NAS-Bench-201 all cell edges have stride 1 and all
resolution changes happen in the residual reduction blocks between stages.
"""

from __future__ import annotations

import torch
from torch import nn

from nasforge_nb201.arch import OP_NAMES


class ReLUConvBN(nn.Sequential):
    """ReLU -> Conv (no bias: BN follows) -> BN, the benchmark's ``nor_conv`` op."""

    def __init__(
        self,
        c_in: int,
        c_out: int,
        kernel_size: int,
        stride: int = 1,
        *,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, kernel_size, stride, padding=kernel_size // 2, bias=False),
            nn.BatchNorm2d(c_out, affine=affine, track_running_stats=track_running_stats),
        )


class Zero(nn.Module):
    """The ``none`` op: a zero tensor that still depends on the input.

    Multiplying by zero (rather than allocating fresh zeros) keeps the shape, dtype and
    device dynamic, which traces and exports to ONNX as a plain ``Mul``.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul(0.0)


def make_op(name: str, channels: int, *, affine: bool = True, track_running_stats: bool = True) -> nn.Module:
    """The module for op ``name`` on ``channels`` channels (shape preserving).

    ``affine``/``track_running_stats`` reach the BN of the conv ops: stand-alone networks
    keep both (as the benchmark trained them); supernets usually drop the affine part so
    that BN cannot rescale an op and hide its architecture weight.
    """
    if name == "none":
        return Zero()
    if name == "skip_connect":
        return nn.Identity()
    if name == "nor_conv_1x1":
        return ReLUConvBN(channels, channels, 1, affine=affine, track_running_stats=track_running_stats)
    if name == "nor_conv_3x3":
        return ReLUConvBN(channels, channels, 3, affine=affine, track_running_stats=track_running_stats)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    raise ValueError(f"unknown nb201 op {name!r} (known: {', '.join(OP_NAMES)})")

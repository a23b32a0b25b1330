"""The DARTS candidate operations and the cell input adapters.

One factory serves both networks: the evaluation network builds ops with affine
BatchNorm, the supernet with ``affine=False`` (as DARTS does, so the architecture weights
and not the BN scales decide an op's contribution).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class ReLUConvBN(nn.Sequential):
    """ReLU, convolution, BN: the pre-activation block DARTS uses to adapt cell inputs."""

    def __init__(
        self, c_in: int, c_out: int, kernel: int, stride: int, padding: int, affine: bool = True
    ) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding, bias=False),
            nn.BatchNorm2d(c_out, affine=affine),
        )


class DilConv(nn.Sequential):
    """Dilated depthwise-separable conv: one ReLU, depthwise (dilated), pointwise, BN."""

    def __init__(
        self,
        c_in: int,
        c_out: int,
        kernel: int,
        stride: int,
        padding: int,
        dilation: int,
        affine: bool = True,
    ) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(
                c_in,
                c_in,
                kernel,
                stride=stride,
                padding=padding,
                dilation=dilation,
                groups=c_in,
                bias=False,
            ),
            nn.Conv2d(c_in, c_out, 1, bias=False),
            nn.BatchNorm2d(c_out, affine=affine),
        )


class SepConv(nn.Sequential):
    """Two stacked separable convs (the first carries the stride), as in DARTS."""

    def __init__(
        self, c_in: int, c_out: int, kernel: int, stride: int, padding: int, affine: bool = True
    ) -> None:
        super().__init__(
            DilConv(c_in, c_in, kernel, stride, padding, 1, affine),
            DilConv(c_in, c_out, kernel, 1, padding, 1, affine),
        )


class Identity(nn.Module):
    """Skip connection at stride 1; a distinct type so drop-path can leave it alone."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Zero(nn.Module):
    """The zero op: its output has the right shape and no signal (nor gradient to x)."""

    def __init__(self, stride: int) -> None:
        super().__init__()
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 1:
            return x.mul(0.0)
        return x[:, :, :: self.stride, :: self.stride].mul(0.0)


class FactorizedReduce(nn.Module):
    """Halve the resolution without losing every other pixel: two offset 1x1 stride-2 convs."""

    def __init__(self, c_in: int, c_out: int, affine: bool = True) -> None:
        super().__init__()
        if c_out % 2:
            raise ValueError(f"FactorizedReduce needs an even output width, got {c_out}")
        self.relu = nn.ReLU(inplace=False)
        self.conv_a = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.conv_b = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(c_out, affine=affine)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(x)
        # Shift by one pixel; padding the far edge keeps both branches the same size for
        # any input size (odd, or 1x1), and on even sizes the pad is never sampled, so
        # the result equals DARTS's ``x[:, :, 1:, 1:]``. No shape branches: ONNX-traceable.
        shifted = nn.functional.pad(x, (0, 1, 0, 1))[:, :, 1:, 1:]
        return self.bn(torch.cat([self.conv_a(x), self.conv_b(shifted)], dim=1))


class Conv7x1x7(nn.Sequential):
    """ReLU, a 1x7 then a 7x1 convolution (the stride split between them), BN: the
    factorised 7x7 of NASNet's search space, as the DARTS code builds it."""

    def __init__(self, channels: int, stride: int, affine: bool = True) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(channels, channels, (1, 7), stride=(1, stride), padding=(0, 3), bias=False),
            nn.Conv2d(channels, channels, (7, 1), stride=(stride, 1), padding=(3, 0), bias=False),
            nn.BatchNorm2d(channels, affine=affine),
        )


OpFactory = Callable[[int, int, bool], nn.Module]

OPS: dict[str, OpFactory] = {
    "none": lambda c, stride, affine: Zero(stride),
    "max_pool_3x3": lambda c, stride, affine: nn.MaxPool2d(3, stride=stride, padding=1),
    "avg_pool_3x3": lambda c, stride, affine: nn.AvgPool2d(
        3, stride=stride, padding=1, count_include_pad=False
    ),
    "skip_connect": lambda c, stride, affine: Identity() if stride == 1 else FactorizedReduce(c, c, affine),
    "sep_conv_3x3": lambda c, stride, affine: SepConv(c, c, 3, stride, 1, affine),
    "sep_conv_5x5": lambda c, stride, affine: SepConv(c, c, 5, stride, 2, affine),
    "dil_conv_3x3": lambda c, stride, affine: DilConv(c, c, 3, stride, 2, 2, affine),
    "dil_conv_5x5": lambda c, stride, affine: DilConv(c, c, 5, stride, 4, 2, affine),
    # the two further ops of the DARTS code's table, which the NASNet-space cells use
    "sep_conv_7x7": lambda c, stride, affine: SepConv(c, c, 7, stride, 3, affine),
    "conv_7x1_1x7": lambda c, stride, affine: Conv7x1x7(c, stride, affine),
}


def make_op(name: str, channels: int, stride: int, *, affine: bool = True) -> nn.Module:
    """Build the op called ``name``; unknown names raise ``KeyError`` listing the known ones."""
    try:
        factory = OPS[name]
    except KeyError:
        raise KeyError(f"unknown DARTS op {name!r}; known: {sorted(OPS)}") from None
    return factory(channels, stride, affine)

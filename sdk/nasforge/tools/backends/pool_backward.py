"""Average pooling whose backward is a depthwise convolution (the forward unchanged).

The CPU kernel of ``avg_pool2d``'s backward is slow (about 20 ns an element on one thread,
four times a depthwise convolution of the same size), and a per-sample kernel diagonal
back-propagates once per output cotangent, so on a NAS-Bench-201 cell with pooling edges it
was half the time. The pooling's adjoint is exact as a convolution: each output gradient,
divided by its window's divisor, spread back over its window with a ones kernel. The forward
is the module's own call, so the logits are bit for bit the same; the backward equals the
native one up to the order of float additions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeGuard

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.tools.backends.forward_patch import forwards_replaced


def _pair(value: int | tuple[int, ...]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[-1]))


def _divisor(m: nn.AvgPool2d, size: tuple[int, int], like: torch.Tensor) -> torch.Tensor:
    """Per output position, what the pooling divides its window sum by: the window sum of
    ones over the window average of ones (the window's size, its valid part's, or the
    override)."""
    k, s, p = _pair(m.kernel_size), _pair(m.stride or m.kernel_size), _pair(m.padding)
    ones = like.new_ones(1, 1, *size)
    box = like.new_ones(1, 1, *k)
    return F.conv2d(ones, box, stride=s, padding=p) / F.avg_pool2d(
        ones, k, s, p, False, m.count_include_pad, m.divisor_override
    )


class _AvgPool2d(torch.autograd.Function):
    @staticmethod
    def forward(x: torch.Tensor, module: nn.AvgPool2d, divisor: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(
            x,
            module.kernel_size,
            module.stride,
            module.padding,
            module.ceil_mode,
            module.count_include_pad,
            module.divisor_override,
        )

    @staticmethod
    def setup_context(
        ctx: Any, inputs: tuple[torch.Tensor, nn.AvgPool2d, torch.Tensor], output: torch.Tensor
    ) -> None:
        x, ctx.module, ctx.divisor = inputs
        ctx.in_shape = x.shape

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        m = ctx.module
        k, s, p = _pair(m.kernel_size), _pair(m.stride or m.kernel_size), _pair(m.padding)
        channels, size = ctx.in_shape[-3], ctx.in_shape[-2:]
        kernel = grad.new_ones(channels, 1, *k)
        g = grad / ctx.divisor
        if s == (1, 1) and all(q <= w - 1 for q, w in zip(p, k, strict=True)):
            # the adjoint of a stride-1 window sum is the window sum of the zero-padded grid
            return (
                F.conv2d(g, kernel, padding=(k[0] - 1 - p[0], k[1] - 1 - p[1]), groups=channels),
                None,
                None,
            )
        extra = tuple(
            n - ((o - 1) * st - 2 * q + w) for n, o, st, q, w in zip(size, g.shape[-2:], s, p, k, strict=True)
        )
        return (
            F.conv_transpose2d(g, kernel, stride=s, padding=p, output_padding=extra, groups=channels),
            None,
            None,
        )


def _supported(m: nn.Module) -> TypeGuard[nn.AvgPool2d]:
    return type(m) is nn.AvgPool2d and not m.ceil_mode


@contextmanager
def convolution_pool_backward(model: nn.Module) -> Iterator[None]:
    """Every plain ``nn.AvgPool2d`` of ``model`` back-propagates by a convolution meanwhile
    (ceil-mode pooling, whose windows overhang, keeps its own); restored exactly on exit."""
    replacements: dict[nn.Module, Callable[[torch.Tensor], torch.Tensor]] = {}
    divisors: dict[tuple[Any, ...], torch.Tensor] = {}
    for m in model.modules():
        if _supported(m):

            def forward(x: torch.Tensor, m: nn.AvgPool2d = m) -> torch.Tensor:
                if x.dim() != 4 or not x.dtype.is_floating_point:
                    return F.avg_pool2d(
                        x,
                        m.kernel_size,
                        m.stride,
                        m.padding,
                        m.ceil_mode,
                        m.count_include_pad,
                        m.divisor_override,
                    )
                key = (id(m), tuple(x.shape[-2:]), x.dtype, x.device)
                if key not in divisors:
                    divisors[key] = _divisor(m, (x.shape[-2], x.shape[-1]), x)
                return _AvgPool2d.apply(x, m, divisors[key])

            replacements[m] = forward
    with forwards_replaced(replacements):
        yield

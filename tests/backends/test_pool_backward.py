"""Average pooling back-propagated by a convolution: the native forward, the native gradient."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasforge.tools.backends.pool_backward import convolution_pool_backward

POOLS = [
    nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),  # NAS-Bench-201's pooling edge
    nn.AvgPool2d(3, stride=1, padding=1),
    nn.AvgPool2d(2, stride=2),  # its residual shortcut
    nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 0), count_include_pad=False),
    nn.AvgPool2d(3, stride=2, padding=1, divisor_override=5),
]


@pytest.mark.parametrize("pool", POOLS, ids=repr)
@pytest.mark.parametrize("size", [(7, 7), (8, 5)])
def test_forward_and_gradient_equal_the_native_ones(pool: nn.AvgPool2d, size: tuple[int, int]) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, *size, generator=gen, dtype=torch.float64, requires_grad=True)
    native = pool(x)
    cot = torch.randn(native.shape, generator=gen, dtype=torch.float64)
    (want,) = torch.autograd.grad(native, x, cot)
    with convolution_pool_backward(pool):
        ours = pool(x)
    (got,) = torch.autograd.grad(ours, x, cot)
    assert torch.equal(ours, native)  # the module's own forward
    assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_ceil_mode_keeps_its_own_and_modules_are_restored() -> None:
    model = nn.Sequential(nn.AvgPool2d(3, 2, ceil_mode=True), nn.AvgPool2d(2))
    with convolution_pool_backward(model):
        assert "forward" not in vars(model[0])  # windows overhang: not patched
        assert "forward" in vars(model[1])
    assert not any("forward" in vars(m) for m in model.modules())

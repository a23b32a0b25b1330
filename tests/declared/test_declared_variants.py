"""Variants of a scope that differ only in sizes share one forward (the mixed weights of
their largest), and only those whose modules are known to compute the same on zero-padded
weights; under one-hot weights a shared forward computes the chosen variant."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from nasforge import Chooser, DeclaredSpace
from nasforge.kernel.declared_mixing import MixedScope


def conv_block(
    padding: Callable[[int], int], norm: Callable[[int], nn.Module]
) -> Callable[[Chooser, int], Any]:
    def block(c: Chooser, cin: int) -> tuple[nn.Module, int]:
        k, w = c.choice("kernel", [3, 5]), c.width("width", [4, 8])
        act = c.choice("act", ["relu", "tanh"])
        layers = [
            nn.Conv2d(cin, w, k, padding=padding(k)),
            norm(w),
            nn.ReLU() if act == "relu" else nn.Tanh(),
        ]
        return nn.Sequential(*layers), w

    return block


class Blocks(DeclaredSpace):
    def __init__(self, padding: Callable[[int], int] = lambda k: k // 2, norm: Any = nn.BatchNorm2d) -> None:
        self.block = conv_block(padding, norm)

    def declare(self, c: Chooser, *, in_channels: int = 1, num_classes: int = 3) -> nn.Module:
        blocks, width = c.repeat("stage", [1, 2], self.block, in_channels)
        return nn.Sequential(blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, num_classes))


def scope_groups(space: DeclaredSpace) -> list[tuple[int, tuple[int, ...]]]:
    supernet = space.supernet()
    return next(m for m in supernet.modules() if isinstance(m, MixedScope)).__dict__["groups"]


def test_sizes_alone_share_a_forward_and_other_differences_do_not() -> None:
    groups = scope_groups(Blocks())
    assert sorted(len(members) for _, members in groups) == [4, 4], (
        "kernel x width share; the activation splits"
    )
    unpadded = scope_groups(Blocks(padding=lambda k: 0))  # kernels then see other pixels
    assert all(len(members) == 1 for _, members in unpadded)
    group_norm = scope_groups(Blocks(norm=lambda w: nn.GroupNorm(1, w)))  # normalises over the channels
    assert sorted(len(members) for _, members in group_norm) == [2, 2, 2, 2], "kernels alone share"


@pytest.mark.parametrize(
    "space", [Blocks(), Blocks(norm=lambda w: nn.GroupNorm(1, w))], ids=["batch-norm", "group-norm"]
)
def test_a_shared_forward_under_one_hot_weights_is_the_chosen_network(space: DeclaredSpace) -> None:
    torch.manual_seed(0)
    supernet = space.supernet().eval()
    x = torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    for g in (space.sample(random.Random(i)) for i in range(6)):
        hard = supernet.one_hot_weights(g)
        with torch.no_grad():
            exact = supernet(x, hard)
        dense = supernet(x, [w.clone().requires_grad_(True) for w in hard])  # every variant's weight mixed
        torch.testing.assert_close(dense.detach(), exact, rtol=1e-5, atol=1e-6)
        built = space.build(g).eval()
        built.load_state_dict(supernet.inherit(g).state_dict())
        with torch.no_grad():
            torch.testing.assert_close(built(x), exact, rtol=1e-6, atol=1e-6)


def test_soft_weights_mix_the_sizes_weights_in_one_forward() -> None:
    space = Blocks()
    supernet = space.supernet()
    calls = []
    scope = next(m for m in supernet.modules() if isinstance(m, MixedScope))
    original = scope._mixed_call
    scope._mixed_call = lambda *a, **k: calls.append(1) or original(*a, **k)  # type: ignore[method-assign]
    supernet(torch.randn(2, 1, 8, 8)).sum().backward()
    assert len(calls) == 2, "one forward per group (relu, tanh), not one per variant (eight)"
    assert all(a.grad is not None and bool(a.grad.abs().sum() > 0) for a in supernet.arch_parameters())


def test_any_subset_of_a_group_may_carry_weight() -> None:
    """Two kernels of one width, then two widths of one kernel: each pair shares a forward."""
    supernet = Blocks().supernet().eval()
    names = [cell.name for cell in supernet.topology]
    x = torch.randn(2, 1, 8, 8)
    for mixed in ("kernel", "width"):
        weights = [torch.zeros(cell.shape) for cell in supernet.topology]
        for w in weights:
            w[:, 0] = 1.0
        weights[names.index(mixed)][0] = torch.tensor([0.5, 0.5])
        with torch.no_grad():
            out = supernet(x, weights, sparse=True)
        assert out.shape == (2, 3) and torch.isfinite(out).all()

"""Gradient variance (issue 14, step 3): the per-sample (torch.func) and mini-batch
estimators of the trace of the per-example gradient covariance agree within 5 %."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nasforge import get_registry
from nasforge.kernel.datasets import load_dataset
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge_insight.grad_variance import minibatch, per_sample


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def _mlp() -> nn.Module:
    return seeded_build(lambda: nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), 0)


def test_per_sample_equals_a_loop_of_backward_passes(digits) -> None:
    model = _mlp()
    x, y = digits.x[:64].flatten(1), digits.y[:64]
    rows = []
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        rows.append(torch.cat([p.grad.flatten() for p in model.parameters()]).double())
    g = torch.stack(rows)
    expected = float(((g - g.mean(0)) ** 2).sum(1).mean())
    got = per_sample(model, x, y, chunk_size=24)  # chunks that do not divide 64
    assert got.value == pytest.approx(expected, rel=1e-6)
    assert got.mean_sq_norm == pytest.approx(float(g.mean(0).square().sum()), rel=1e-6)
    assert sum(got.blocks.values()) == pytest.approx(got.value)


def test_estimators_agree_on_an_mlp(digits) -> None:
    model = _mlp()
    x, y = digits.x[:1024].flatten(1), digits.y[:1024]
    exact = per_sample(model, x, y).value
    batched = minibatch(model, x, y, batch_size=16, repeats=16, generator=seeded_generator(0)).value
    assert abs(batched / exact - 1) < 0.05


@pytest.mark.slow
def test_estimators_agree_on_a_cell_network_with_batchnorm(digits) -> None:
    space = get_registry().space("nb201")
    g = space.parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|skip_connect~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    )
    model = seeded_build(lambda: space.build(g, C=4, N=1, in_channels=1, num_classes=10), 0)
    model.train()
    x, y = digits.x[:256], digits.y[:256]
    exact = per_sample(model, x, y)
    batched = minibatch(model, x, y, batch_size=8, repeats=16, generator=seeded_generator(0))
    assert abs(batched.value / exact.value - 1) < 0.05
    assert model.training  # the estimators restore the mode they found

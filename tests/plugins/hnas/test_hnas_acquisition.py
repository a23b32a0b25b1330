"""Expected improvement against its closed form's definition, and the seeded maximiser."""

from __future__ import annotations

import math

import torch

from nasforge_hnas import ExactGP, expected_improvement
from nasforge_hnas.acquisition import maximise


def test_expected_improvement_matches_monte_carlo() -> None:
    gen = torch.Generator().manual_seed(0)
    mean = torch.tensor([0.0, 1.0, -0.5], dtype=torch.float64)
    std = torch.tensor([1.0, 0.2, 2.0], dtype=torch.float64)
    draws = mean + std * torch.randn(400_000, 3, generator=gen, dtype=torch.float64)
    mc = (draws - 0.3).clamp_min(0.0).mean(0)
    assert torch.allclose(expected_improvement(mean, std, 0.3), mc, atol=5e-3)


def test_expected_improvement_without_uncertainty_is_the_plain_gain() -> None:
    ei = expected_improvement(torch.tensor([2.0, 0.0]), torch.tensor([0.0, 0.0]), best=1.0)
    assert ei.tolist() == [1.0, 0.0]


def test_maximiser_finds_the_peak_of_a_known_surrogate() -> None:
    x = torch.tensor([[0.1, 0.1], [0.9, 0.9], [0.7, 0.2], [0.2, 0.8], [0.5, 0.5]], dtype=torch.float64)
    y = -((x - torch.tensor([0.7, 0.2], dtype=torch.float64)) ** 2).sum(1)
    gp = ExactGP().set_hyperparameters(x, y, length_scale=0.3)
    a = maximise(
        gp, "ucb", dims=2, best=float(y.max()), generator=torch.Generator().manual_seed(1), kappa=0.0
    )
    b = maximise(
        gp, "ucb", dims=2, best=float(y.max()), generator=torch.Generator().manual_seed(1), kappa=0.0
    )
    assert torch.equal(a, b)
    assert bool(((a >= 0) & (a <= 1)).all())
    assert math.dist(a.tolist(), [0.7, 0.2]) < 0.1

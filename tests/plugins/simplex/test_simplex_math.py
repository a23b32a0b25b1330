"""The small pieces: simplex projection, the three parameterisations, Kendall tau, k-best."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

from nasforge.kernel.seeding import seeded_generator
from nasforge.run.training import AdamConfig
from nasforge.tools.scoring import kendall
from nasforge_simplex.candidate_ranking import k_best_rows
from nasforge_simplex.parameterisation import (
    EuclideanProjection,
    ExponentiatedGradient,
    SoftmaxLogits,
    make_parameterisation,
)
from nasforge_simplex.simplex_projection import project_to_simplex
from nasforge_simplex.simplex_qp import stationary_alpha


def points(n: int = 50, h: int = 5, seed: int = 0) -> torch.Tensor:
    return 3 * torch.randn((n, h), generator=seeded_generator(seed), dtype=torch.float64)


def test_projection_lands_on_the_simplex_and_is_idempotent() -> None:
    p = project_to_simplex(points())
    assert bool((p >= 0).all())
    torch.testing.assert_close(p.sum(dim=-1), torch.ones(50, dtype=torch.float64))
    torch.testing.assert_close(project_to_simplex(p), p)
    assert bool((p == 0).any())  # it reaches the boundary (what projection is for)


def test_projection_is_the_nearest_simplex_point() -> None:
    """Against an independent solver: argmin |alpha - a|^2 on the simplex is the QP with
    outputs e_i and target a."""
    eye = torch.eye(5, dtype=torch.float64)[None]
    for a in points(10):
        torch.testing.assert_close(project_to_simplex(a), stationary_alpha(eye, a[None]), atol=1e-10, rtol=0)


def arch(seed: int = 0) -> list[nn.Parameter]:
    return [nn.Parameter(0.1 * torch.randn((3, 4), generator=seeded_generator(seed), dtype=torch.float64))]


def grads(seed: int = 1) -> list[torch.Tensor]:
    return [torch.randn((3, 4), generator=seeded_generator(seed), dtype=torch.float64)]


def test_exponentiated_gradient_is_the_multiplicative_update_and_stays_interior() -> None:
    eg = ExponentiatedGradient(arch(), lr=0.7)
    before = eg.alpha()[0]
    g = grads()[0]
    eg.step([g])
    expected = before * torch.exp(-0.7 * g)
    torch.testing.assert_close(eg.alpha()[0], expected / expected.sum(dim=-1, keepdim=True))
    for _ in range(20):
        eg.step([g])
    a = eg.alpha()[0]
    assert bool((a > 0).all()) and torch.allclose(a.sum(-1), torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(torch.softmax(eg.arch[0].detach(), -1), a)  # the supernet sees the point
    for _ in range(200):  # far past float64's range of weights: the log-domain state stays finite
        eg.step([50 * g])
    assert bool(torch.isfinite(eg.arch[0]).all()) and torch.allclose(
        eg.alpha()[0].sum(-1), torch.ones(3, dtype=torch.float64)
    )


def test_eg_floor_bounds_every_weight_from_below() -> None:
    eg = ExponentiatedGradient(arch(), lr=10.0, floor=1e-3)
    for _ in range(50):
        eg.step(grads())
    assert float(eg.alpha()[0].min()) >= 1e-3 / (1 + 4e-3)  # clamped, then renormalised


def test_softmax_steps_adam_on_the_chain_rule_gradient() -> None:
    """SoftmaxLogits turns d/d alpha into d/d theta; compare with autograd through softmax."""
    a = arch()
    sm = SoftmaxLogits(a, optimizer=AdamConfig(lr=0.1, weight_decay=0.0))
    g = grads()[0]
    theta = a[0].detach().clone().requires_grad_(True)
    (torch.softmax(theta, -1) * g).sum().backward()
    twin = nn.Parameter(a[0].detach().clone())
    opt = torch.optim.Adam([twin], lr=0.1, betas=(0.5, 0.999))
    twin.grad = theta.grad
    opt.step()
    sm.step([g])
    torch.testing.assert_close(a[0].detach(), twin.detach())


def test_projection_keeps_zeros_and_writes_log_weights_back() -> None:
    a = arch()
    proj = EuclideanProjection(a, lr=5.0)
    proj.step(grads())
    alpha = proj.alpha()[0]
    assert bool((alpha == 0).any())
    torch.testing.assert_close(torch.softmax(a[0].detach(), -1), alpha, atol=1e-12, rtol=0)


def test_unknown_parameterisation_is_refused() -> None:
    with pytest.raises(ValueError, match="softmax, eg or proj"):
        make_parameterisation("adamw", arch(), lr=1.0, adam=AdamConfig(), floor=0.0)


def test_kendall_tau_of_the_diagnostic() -> None:
    """The diagnostic ranks a handful of candidates with the core's tau-b."""
    assert kendall([1, 2, 3], [10, 20, 30]) == 1.0
    assert kendall([1, 2, 3], [3, 2, 1]) == -1.0
    assert math.isnan(kendall([1, 1], [2, 2]))
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)


def test_k_best_rows_matches_brute_force() -> None:
    rows = [torch.randn(4, generator=seeded_generator(s), dtype=torch.float64) for s in range(3)]
    every = sorted(
        (
            (sum(float(rows[r][c]) for r, c in enumerate(choice)), choice)
            for choice in itertools.product(range(4), repeat=3)
        ),
        key=lambda item: (-item[0], item[1]),
    )
    best = k_best_rows(rows, 7)
    assert [c for _, c in best] == [c for _, c in every[:7]]
    assert [s for s, _ in best] == pytest.approx([s for s, _ in every[:7]])

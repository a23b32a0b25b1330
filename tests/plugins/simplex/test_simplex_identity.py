"""Seed 003's identity and theorems as exact fixtures (float64, the paper's two-layer setting).

R1: ``L_i = (1 - alpha_i)^2 D_i`` under realizability, to 1e-10, by three independent
computations (the loss against the labels, Lemma 5's D from its definition, the distance
form E1). E7: the same in excess form at the stationary alpha of non-realizable labels.
Section 5's assertions: Theorem 7 is never violated, and the exact margins decide arg max.
"""

from __future__ import annotations

import random

import pytest
import torch

from nasforge.kernel.seeding import seeded_generator
from nasforge_simplex.consistency import (
    INCONSISTENT,
    REGIME_EXACT_REALIZABLE,
    REGIME_EXACT_STATIONARY,
    REGIME_HEURISTIC,
    consistency_report,
)
from nasforge_simplex.simplex_qp import stationary_alpha
from nasforge_simplex.two_layer import draw_two_layer

LIBRARY = ("relu", "leaky_relu", "tanh", "sigmoid", "softplus", "elu", "gelu", "swish", "identity")


def dirichlet(h: int, seed: int) -> torch.Tensor:
    e = -torch.log(torch.rand(h, generator=seeded_generator(seed), dtype=torch.float64))
    return e / e.sum()


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(((a - b).abs() / b.abs()).max())


@pytest.mark.slow
def test_r1_candidate_loss_is_one_minus_alpha_squared_times_d() -> None:
    ops = ("relu", "tanh", "sigmoid", "elu")
    net = draw_two_layer(k=20, d=64, n=200_000, seed=0)
    g = net.outputs(ops)
    alpha = dirichlet(4, seed=1)
    y = g @ alpha  # A3: the searched model generates the labels
    report = consistency_report(g, alpha, ops, targets=y)
    losses = torch.tensor(report.losses, dtype=torch.float64)
    direct = 0.5 * (y[:, None] - g).square().mean(dim=0)  # L_i computed here, not by the report
    torch.testing.assert_close(losses, direct, rtol=1e-12, atol=0)
    assert relative(torch.tensor(report.identity, dtype=torch.float64), direct) < 1e-10  # (1 - a_i)^2 D_i
    assert relative(torch.tensor(report.geometric, dtype=torch.float64), direct) < 1e-10  # E1
    assert report.regime == REGIME_EXACT_REALIZABLE and report.realizability_gap < 1e-12
    assert report.supernet_loss == pytest.approx(0.0, abs=1e-25)


def test_r1_holds_on_the_act_mlp_supernet_last_layer() -> None:
    """The probe on a real supernet: the last mixed layer feeds the affine head, so its
    candidates' losses obey the identity exactly; the first layer does not (non-linear)."""
    from nasforge.api import load_space
    from nasforge.kernel.seeding import seeded_build
    from nasforge_simplex.edge_probe import supernet_consistency

    space = load_space("act-mlp", layers=2, ops=["relu", "tanh", "sigmoid"])
    net = seeded_build(lambda: space.supernet(width=16, in_features=5, num_classes=3), 0).double()
    alphas = [torch.stack([dirichlet(3, 2), dirichlet(3, 3)])]
    x = torch.randn((400, 5), generator=seeded_generator(4), dtype=torch.float64)
    with torch.no_grad():
        y = net(x, alphas)  # realizable: the supernet itself is the teacher
    first, last = supernet_consistency(net, alphas, x, y, loss="squared")
    r = last.report
    assert r.regime == REGIME_EXACT_REALIZABLE and r.linearity_gap < 1e-12
    assert (
        relative(torch.tensor(r.identity, dtype=torch.float64), torch.tensor(r.losses, dtype=torch.float64))
        < 1e-10
    )
    assert first.report.regime == REGIME_HEURISTIC and first.report.linearity_gap > 1e-3


def test_e7_stationary_alpha_replaces_realizability() -> None:
    """R6: labels no alpha generates; at the simplex-optimal alpha (fixed W) the identity
    holds in excess form, ``L_i - L_alpha = (1 - alpha_i)^2 D_i``, for every candidate alpha
    keeps (one above the identity for the others); at uniform alpha it does not."""
    ops = ("relu", "tanh", "sigmoid", "elu")
    net = draw_two_layer(k=20, d=64, n=50_000, seed=0)
    g = net.outputs(ops)
    noise = torch.randn(g.shape[0], generator=seeded_generator(5), dtype=torch.float64)
    y = (
        g @ torch.tensor([0.6, 0.5, 0.2, -0.3], dtype=torch.float64)
        + 0.3 * torch.sin(2 * net.x[:, 0])
        + 0.3 * noise
    )
    alpha = stationary_alpha(g, y)
    report = consistency_report(g, alpha, ops, targets=y)
    assert report.realizability_gap > 0.05  # far from A3 ...
    assert report.regime == REGIME_EXACT_STATIONARY and report.identity_residual < 1e-9  # ... exact by E7
    excess = torch.tensor(report.losses, dtype=torch.float64) - report.supernet_loss
    identity = torch.tensor(report.identity, dtype=torch.float64)
    support = alpha > 0
    assert 0 < int(support.sum()) < 4  # one candidate left out: the off-support case is checked too
    assert relative(identity[support], excess[support]) < 1e-9
    assert bool((excess[~support] >= identity[~support]).all())  # conservative off the support
    assert report.exact_ok == report.match
    uniform = consistency_report(g, torch.full((4,), 0.25, dtype=torch.float64), ops, targets=y)
    assert uniform.regime == REGIME_HEURISTIC and uniform.identity_residual > 1e-2


@pytest.mark.slow
@pytest.mark.parametrize("h", [3, 4, 5])
def test_theorem7_is_never_violated_and_margins_decide_arg_max(h: int) -> None:
    """Section 5: where Condition 6 holds for (i, j), alpha_j < alpha_i; under A3 the
    exact margins (E2) are positive exactly when arg max is the shared best."""
    rng = random.Random(h)
    seen_inconsistent = 0
    for trial in range(60):
        ops = tuple(rng.sample(LIBRARY, h))
        net = draw_two_layer(k=10, d=32, n=2000, scale=rng.uniform(0.5, 3.0), seed=1000 * h + trial)
        g = net.outputs(ops)
        alpha = dirichlet(h, seed=trial)
        report = consistency_report(g, alpha, ops, targets=g @ alpha, fragility_draws=100)
        for i in range(h):
            for j in range(h):
                if report.condition6[i][j]:
                    assert report.alpha[j] < report.alpha[i], (ops, report.alpha, i, j)
        assert report.exact_ok == report.match
        seen_inconsistent += report.verdict == INCONSISTENT
    assert seen_inconsistent > 0  # with three or more candidates arg max does fail (R3)

"""SVGD-RD (Prop. 5.1, 5.2) and the thesis's 2-D toy (Fig. 5.2)."""

from __future__ import annotations

import pytest
import torch

from nasforge_nesbs.svgd import generic_direction, log_prob_grad, rbf_direction, rbf_kernel, svgd_rd
from nasforge_nesbs.toy import spread, toy_log_prob, toy_particles

DELTAS = (-1.0, -0.5, 0.0, 0.5, 1.0)


@pytest.mark.parametrize("delta", [-2.0, -1.0, 0.0, 0.7])
def test_rbf_closed_form_equals_the_proposition_by_autograd(delta) -> None:
    gen = torch.Generator().manual_seed(3)
    x = torch.randn((5, 2, 3), generator=gen, dtype=torch.float64)
    g = torch.randn((5, 2, 3), generator=gen, dtype=torch.float64)
    closed = rbf_direction(x, g, delta, bandwidth=1.7)
    literal = generic_direction(x, g, delta, rbf_kernel(1.7))
    assert torch.allclose(closed, literal, atol=1e-10)


def test_delta_zero_is_plain_svgd_and_minus_one_drops_the_repulsion() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((4, 3), generator=gen, dtype=torch.float64)
    g = torch.zeros_like(x)  # no density: only the kernel terms remain
    assert torch.count_nonzero(rbf_direction(x, g, -1.0, bandwidth=1.0)) == 0
    plain = rbf_direction(x, g, 0.0, bandwidth=1.0)
    assert torch.allclose(rbf_direction(x, g, 1.0, bandwidth=1.0), 2 * plain)


@pytest.mark.parametrize("delta", [-2.0, 0.0, 1.0])
def test_one_particle_finds_the_mode_for_any_delta(delta) -> None:
    """Prop. 5.2: with n = 1 the kernel terms vanish and SVGD-RD is gradient ascent on log p."""
    mode = torch.tensor([[0.3, -1.2]], dtype=torch.float64)

    def log_p(x: torch.Tensor) -> torch.Tensor:
        return -0.5 * ((x - mode) ** 2).sum(-1)

    x = svgd_rd(log_p, torch.zeros((1, 2), dtype=torch.float64), delta=delta, steps=300)
    assert torch.allclose(x, mode, atol=1e-6)


@pytest.mark.slow
def test_fig_5_2_spread_rises_monotonically_with_delta() -> None:
    """Thesis setup (n = 15, L = 1000, lr 0.1, momentum 0.9, median RBF): more diverse as delta
    grows from -1 to 1, while the particles' mean log density falls (they leave the modes)."""
    particles = {d: toy_particles(d, seed=0) for d in DELTAS}
    spreads = [spread(particles[d]) for d in DELTAS]
    densities = [float(toy_log_prob(particles[d]).mean()) for d in DELTAS]
    assert all(a < b for a, b in zip(spreads, spreads[1:], strict=False)), spreads
    assert all(a > b for a, b in zip(densities, densities[1:], strict=False)), densities
    assert spreads[-1] > 3 * spreads[0]


@pytest.mark.slow
def test_fig_5_2_delta_minus_one_collapses_onto_the_modes() -> None:
    """No repulsion: every particle climbs to a local maximum of the mixture (grad log p = 0),
    and all 15 sit on at most the mixture's two modes."""
    x = toy_particles(-1.0, seed=0)
    assert float(log_prob_grad(toy_log_prob, x).norm(dim=-1).max()) < 1e-4
    distinct = torch.unique(x.round(decimals=4), dim=0)
    assert len(distinct) <= 2
    # one particle alone (Prop. 5.2) also reaches a mode, whatever delta
    single = toy_particles(1.0, n=1, seed=0)
    assert float(log_prob_grad(toy_log_prob, single).norm()) < 1e-4
    assert torch.cdist(single, distinct).min() < 1e-3

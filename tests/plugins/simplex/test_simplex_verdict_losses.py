"""The verdict reads the measured losses in every branch and certifies only where Theorem 7 holds.

An exponentiated-gradient search drives alpha to a vertex, so the near-vertex branch is
common; there, arg max is the shared best only if its measured loss says so (with targets
that are not the supernet's own output, the geometric identity no longer makes it so).
Under cross-entropy the regime is heuristic: Condition 6 may hold, but Theorem 7 (squared
loss, linear edge, realizability or stationarity) does not apply, so nothing is certified.
"""

from __future__ import annotations

import torch

from nasforge_simplex.consistency import AMBIGUOUS, CONSISTENT, INCONSISTENT, consistency_report


def _two_candidates() -> tuple[torch.Tensor, torch.Tensor]:
    """Outputs of two candidates on 4 inputs and real targets: candidate 0's half squared
    error is 1.43, candidate 1's is 0.55 (each input's error set exactly)."""
    t = torch.zeros(4, dtype=torch.float64)
    g0 = t + torch.sqrt(torch.tensor(2 * 1.43, dtype=torch.float64))
    g1 = t - torch.sqrt(torch.tensor(2 * 0.55, dtype=torch.float64))
    return torch.stack([g0, g1], dim=1), t


def test_near_vertex_alpha_with_a_worse_measured_loss_is_inconsistent() -> None:
    g, t = _two_candidates()
    alpha = torch.tensor([1.0 - 1e-6, 1e-6], dtype=torch.float64)  # an EG search's vertex
    r = consistency_report(g, alpha, ("relu", "tanh"), targets=t, tie_tol=1e-3, fragility_draws=10)
    assert abs(r.losses[0] - 1.43) < 1e-12
    assert abs(r.losses[1] - 0.55) < 1e-12
    assert r.argmax == 0 and r.shared_best == 1
    assert r.verdict == INCONSISTENT
    assert "1.43" in r.reason and "0.55" in r.reason


def test_near_vertex_alpha_on_the_measured_best_is_consistent() -> None:
    g, t = _two_candidates()
    alpha = torch.tensor([1e-6, 1.0 - 1e-6], dtype=torch.float64)
    r = consistency_report(g, alpha, ("relu", "tanh"), targets=t, tie_tol=1e-3, fragility_draws=10)
    assert r.verdict == CONSISTENT and r.match
    assert "lowest measured" in r.reason


def test_tied_weights_with_a_third_candidate_best_are_inconsistent() -> None:
    t = torch.zeros(3, dtype=torch.float64)
    g = torch.stack([t + 2.0, t - 2.0, t + 0.1], dim=1)  # losses 2, 2, 0.005
    alpha = torch.tensor([0.45, 0.45, 0.10], dtype=torch.float64)
    r = consistency_report(g, alpha, ("a", "b", "c"), targets=t, tie_tol=1e-3, fragility_draws=10)
    assert r.shared_best == 2
    assert r.verdict == INCONSISTENT


def test_tied_weights_between_the_best_and_another_are_ambiguous() -> None:
    t = torch.zeros(3, dtype=torch.float64)
    g = torch.stack([t + 0.1, t - 2.0, t + 3.0], dim=1)
    alpha = torch.tensor([0.45, 0.45, 0.10], dtype=torch.float64)
    r = consistency_report(g, alpha, ("a", "b", "c"), targets=t, tie_tol=1e-3, fragility_draws=10)
    assert r.verdict == AMBIGUOUS


def test_cross_entropy_is_never_certified_by_theorem_7() -> None:
    gen = torch.Generator().manual_seed(0)
    n, m = 64, 4
    labels = torch.randint(0, m, (n,), generator=gen)
    best = 5.0 * torch.nn.functional.one_hot(labels, m).double()  # confident and right: lowest CE
    others = [0.1 * torch.randn(n, m, generator=gen, dtype=torch.float64) for _ in range(2)]
    g = torch.stack([best, *others], dim=1)
    alpha = torch.tensor([0.4, 0.35, 0.25], dtype=torch.float64)
    r = consistency_report(
        g, alpha, ("a", "b", "c"), targets=labels, loss="cross_entropy", fragility_draws=10
    )
    assert r.regime == "heuristic"
    assert r.shared_best == 0 and r.argmax == 0
    assert all(r.condition6[0][j] for j in (1, 2)), "the fixture should satisfy Condition 6"
    assert not r.certified
    assert "certified" not in r.reason
    assert r.verdict == CONSISTENT and "lowest measured" in r.reason

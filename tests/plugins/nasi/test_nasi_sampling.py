"""Straight-through Gumbel sampling, eq. 18's normalised sum and the ν rules (40, 41)."""

from __future__ import annotations

import pytest
import torch

from nasforge_nasi import AdaptiveConstraint, FixedConstraint, NormalisedSum, straight_through_gumbel


def test_sample_is_one_hot_and_gradient_reaches_every_logit() -> None:
    logits = torch.zeros(6, 5, requires_grad=True)
    w = straight_through_gumbel(logits, torch.Generator().manual_seed(0))
    assert torch.equal(w.detach().sum(-1), torch.ones(6))
    assert set(w.detach().unique().tolist()) <= {0.0, 1.0}
    (w * torch.arange(30.0).reshape(6, 5)).sum().backward()
    assert bool((logits.grad != 0).all())


def test_mask_is_respected_and_uniform_at_zero_logits() -> None:
    gen = torch.Generator().manual_seed(1)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    counts = torch.zeros(2, 4)
    n = 4000
    for _ in range(n):
        counts += straight_through_gumbel(torch.zeros(2, 4), gen, mask=mask).detach()
    assert counts[0, 2:].sum() == 0
    for row, k in ((0, 2), (1, 4)):
        freq = counts[row, :k] / n
        assert torch.allclose(freq, torch.full((k,), 1.0 / k), atol=0.03)


def test_sampling_is_reproducible_from_the_generator() -> None:
    a = straight_through_gumbel(torch.zeros(3, 3), torch.Generator().manual_seed(7))
    b = straight_through_gumbel(torch.zeros(3, 3), torch.Generator().manual_seed(7))
    assert torch.equal(a, b)
    with pytest.raises(ValueError):
        straight_through_gumbel(
            torch.zeros(2, 2), torch.Generator(), mask=torch.zeros(2, 2, dtype=torch.bool)
        )


def test_normalised_sum_matches_eq_18() -> None:
    gen = torch.Generator().manual_seed(0)
    grads = [torch.randn(7, generator=gen, dtype=torch.float64) * s for s in (1.0, 3.0, 0.5, 2.0)]
    acc = NormalisedSum(7, xi=1.0)
    for g in grads:
        acc.add(g)
    expected = torch.zeros(7, dtype=torch.float64)
    running = 0.0
    for g in grads:
        running = max(running, float(g.norm()))
        expected += g / running
    assert torch.allclose(acc.delta(), expected / len(grads))


def test_normalised_sum_skips_samples_until_a_nonzero_gradient() -> None:
    acc = NormalisedSum(3, xi=2.0)
    acc.add(torch.zeros(3))
    acc.add(torch.tensor([3.0, 4.0, 0.0]))
    assert acc.skipped == 1
    assert torch.allclose(acc.delta(), torch.tensor([0.6, 0.8, 0.0], dtype=torch.float64))
    assert torch.equal(NormalisedSum(2).delta(), torch.zeros(2, dtype=torch.float64))


def test_constraint_rules() -> None:
    fixed = FixedConstraint.calibrated([1.0, 2.0, 6.0])
    fixed.observe(100.0)
    assert fixed.value() == pytest.approx(3.0)
    ada = AdaptiveConstraint(10.0)
    assert ada.value() == 10.0  # ν₁ = ν₀
    ada.observe(4.0)
    assert ada.value() == pytest.approx(7.0)  # ν₂ = (ν₀ + s₁) / 2
    ada.observe(1.0)
    assert ada.value() == pytest.approx(5.0)
    with pytest.raises(ValueError):
        FixedConstraint(0.0)

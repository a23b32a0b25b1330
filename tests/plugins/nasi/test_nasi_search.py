"""Algorithm 1's invariants: α₀ = 0 throughout, μ-invariance under full violation, and
the zero-gradient fallback (notes §4.4, A6, A8)."""

from __future__ import annotations

import pytest
import torch

import nasforge_nasi.search as search_module
from nasforge_nasi import Nasi
from tests.plugins.nasi.tiny import TINY


@pytest.mark.slow
def test_every_sample_is_drawn_at_alpha_zero(monkeypatch, nb201, digits) -> None:
    seen: list[torch.Tensor] = []
    original = search_module.straight_through_gumbel

    def spy(logits, generator, **kw):
        seen.append(logits.detach().clone())
        return original(logits, generator, **kw)

    monkeypatch.setattr(search_module, "straight_through_gumbel", spy)
    Nasi().fit(nb201, digits, **TINY)
    assert len(seen) == TINY["calibration_samples"] + TINY["steps"]
    assert all(bool((s == 0).all()) for s in seen)


@pytest.mark.slow
def test_mu_invariance_when_every_sample_violates(nb201, digits) -> None:
    """With ν below every proxy, G_t = (1 - μ)∇Θ̃: eq. 18's normalisation cancels |1 - μ|,
    so μ = 2, 3, 4 give one α*, and μ = 0 (no constraint) gives exactly its negative."""
    runs = {
        mu: Nasi().fit(nb201, digits, mu=mu, nu0=1e-12, **TINY).produced_by["run"]
        for mu in (0.0, 2.0, 3.0, 4.0)
    }
    assert all(r["violations"] == TINY["steps"] for r in runs.values())
    ref = torch.tensor(runs[2.0]["alpha_star"])
    for mu in (3.0, 4.0):
        assert torch.allclose(torch.tensor(runs[mu]["alpha_star"]), ref, atol=1e-6)
    assert torch.allclose(torch.tensor(runs[0.0]["alpha_star"]), -ref, atol=1e-6)
    assert runs[2.0]["genotype"] == runs[4.0]["genotype"]


def test_mu_one_with_every_sample_violating_falls_back(nb201, digits) -> None:
    with pytest.warns(RuntimeWarning, match="every sampled gradient was zero"):
        out = Nasi().fit(nb201, digits, mu=1.0, nu0=1e-12, **TINY)
    run = out.produced_by["run"]
    assert run["fallback"] is not None
    assert all(n == 0.0 for n in run["grad_norms"])
    nb201.validate(out.best)


@pytest.mark.slow
def test_adaptive_nu_follows_eq_41(nb201, digits) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", nu0=50.0, **TINY).produced_by["run"]
    assert run["nus"][0] == 50.0
    for t in range(1, len(run["nus"])):
        assert run["nus"][t] == pytest.approx((50.0 + sum(run["proxies"][:t])) / (t + 1))

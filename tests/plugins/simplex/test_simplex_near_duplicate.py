"""The near-duplicate failure (R4): {relu, tanh, leaky_relu} with alpha = (0.3, 0.4, 0.3).

leaky_relu (slope 0.1) almost coincides with relu, so the two split their weight and arg
max hands the layer to tanh, although leaky_relu is the shared-weight best. The diagnostic
must say INCONSISTENT, name the pair, and Condition 6 must not certify arg max. The
numbers are the research note's (same draw: k=20, d=64, s=2, n=1e5, seed 0).
"""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.seeding import seeded_generator
from nasforge_simplex.consistency import CONSISTENT, INCONSISTENT, REGIME_EXACT_REALIZABLE, consistency_report
from nasforge_simplex.two_layer import OpSetCheck, draw_two_layer, op_set_report

OPS = ("relu", "tanh", "leaky_relu")


@pytest.fixture(scope="module")
def report():
    net = draw_two_layer(k=20, d=64, n=100_000, scale=2.0, seed=0)
    g = net.outputs(OPS)
    alpha = torch.tensor([0.3, 0.4, 0.3], dtype=torch.float64)
    return consistency_report(g, alpha, OPS, targets=g @ alpha)


def test_r4_numbers(report) -> None:
    assert report.losses == pytest.approx((0.0609, 0.1220, 0.0513), abs=5e-4)
    assert pytest.approx((0.124, 0.339, 0.105), abs=5e-3) == report.D
    assert report.delta[0][2] == pytest.approx(0.0148, abs=5e-4)  # relu ~ leaky_relu
    assert report.delta[0][1] == pytest.approx(0.7055, abs=5e-3)
    assert report.delta[1][2] == pytest.approx(0.6574, abs=5e-3)


def test_near_duplicates_are_flagged_and_arg_max_fails(report) -> None:
    assert report.regime == REGIME_EXACT_REALIZABLE
    assert OPS[report.argmax] == "tanh" and OPS[report.shared_best] == "leaky_relu"
    assert report.verdict == INCONSISTENT and "leaky_relu" in report.reason
    assert [(d.first, d.second) for d in report.near_duplicates] == [("relu", "leaky_relu")]
    assert report.near_duplicates[0].ratio < 0.05
    assert any("relu ~ leaky_relu" in w for w in report.warnings)
    assert not report.certified and not report.exact_ok  # neither the paper's condition nor E2 passes
    assert report.rank_by_alpha[0] == 1 and report.rank_by_shared[0] == 2


def test_the_pre_search_check_flags_the_set_before_any_search() -> None:
    """``op_set_report``: the geometry alone (uniform alpha, A3) already names the pair."""
    flagged = op_set_report(OPS, check=OpSetCheck(n=20_000))
    assert [(d.first, d.second) for d in flagged.near_duplicates] == [("relu", "leaky_relu")]
    assert flagged.fragility > 0.2  # R5b: about 0.30
    clean = op_set_report(("relu", "tanh", "sigmoid"), check=OpSetCheck(n=20_000))
    assert clean.near_duplicates == () and clean.fragility < flagged.fragility


def test_distinct_activations_at_a_decided_alpha_are_consistent() -> None:
    net = draw_two_layer(k=20, d=64, n=20_000, scale=2.0, seed=0)
    ops = ("relu", "tanh", "sigmoid")
    g = net.outputs(ops)
    alpha = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    r = consistency_report(g, alpha, ops, targets=g @ alpha)
    assert r.verdict == CONSISTENT and r.match and r.exact_ok and not r.near_duplicates


def test_fragility_is_zero_for_equidistant_candidates() -> None:
    """E4: arg max is right for every alpha iff the candidates are equidistant."""
    g = torch.eye(4, dtype=torch.float64)[None].expand(3, 4, 4)  # orthonormal outputs
    r = consistency_report(g, torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64), list("abcd"))
    assert r.fragility == 0.0 and r.equidistance_cv == pytest.approx(0.0, abs=1e-12)
    noisy = g + 0.05 * torch.randn(g.shape, generator=seeded_generator(0), dtype=torch.float64)
    assert consistency_report(noisy, r.alpha, list("abcd")).fragility > 0.0

"""HNAS's scores (thesis eq. 7.7 and its scenarios) and the (μ, ν) plane."""

from __future__ import annotations

import numpy as np
import pytest

from nasforge_hnas import MuNuPlane, hnas_score


def test_realizable_score_ranks_by_the_metric() -> None:
    m = np.array([3.0, 1.0, 2.0])
    assert np.argsort(hnas_score(m, np.ones(3), mu=5.0, nu=1.0, objective="realizable")).tolist() == [0, 2, 1]


def test_non_realizable_score_formula_and_penalties() -> None:
    m, k = np.array([2.0, 4.0]), np.array([10.0, 3.0])
    got = hnas_score(m, k, mu=0.5, nu=9.0)
    assert np.allclose(got, k / (m + 1e-6) + 0.5 * np.abs(m**2 - 9.0))
    sq = hnas_score(m, k, mu=0.5, nu=9.0, penalty_kind="square")
    assert np.allclose(sq, k / (m + 1e-6) + 0.5 * (m**2 - 9.0) ** 2)
    assert np.allclose(hnas_score(m, k, mu=0.5, nu=9.0, objective="kappa"), k / (m + 1e-6))


def test_unscorable_architectures_score_infinity() -> None:
    got = hnas_score(np.array([np.nan, 1.0]), np.array([1.0, np.inf]), mu=1.0, nu=1.0)
    assert np.isinf(got).all()
    with pytest.raises(ValueError):
        hnas_score(np.ones(1), np.ones(1), mu=1.0, nu=1.0, objective="best")


def test_plane_maps_the_unit_square() -> None:
    paper = MuNuPlane(mode="paper", log10_mu=(-4.0, 0.0), scale=5e3)
    assert paper.mu_nu(np.array([0.5, 0.5]), paper.normaliser(np.ones(3), np.ones(3))[2]) == pytest.approx(
        (1e-2, 2500.0**2)
    )
    norm = MuNuPlane()
    m_div, k_div, scale = norm.normaliser(
        np.array([1.0, 2.0, 4.0, np.nan]), np.array([10.0, 20.0, 30.0, 1.0])
    )
    assert (m_div, k_div, scale) == (2.0, 15.0, 2.0)
    assert norm.unit_of_log10_mu(-3.0) == 0.0 and norm.unit_of_log10_mu(2.0) == 1.0

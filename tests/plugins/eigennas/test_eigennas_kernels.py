"""The infinite-width kernel recursion: its Gaussian moments, its fixtures, and the networks it predicts.

Issue 12's "must show": for every depth-3 architecture at width 2048 the recursion matches
the empirical NTK's diagonal within 5 % (``-m slow``; a smaller version runs by default),
and the cheap score (the recursion's data-free diagonal) ranks 300 random depth-5
architectures like the exact smallest eigenvalue, Kendall τ >= 0.8.

"The diagonal" is compared as Eigen-NAS reads it, tr(K)/N over 16 unit-norm inputs of one
initialisation. Single entries fluctuate more at finite width (measured at width 2048: a
median worst entry of 6.6 %, 15 % at most over the 50 architectures, 6.4 % at most when
three initialisations are averaged), which is noise of order 1/√m, not a bias.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch
from scipy.integrate import quad

from nasforge.kernel.seeding import seeded_build
from nasforge.tools.backends import KernelSpec, empirical_ntk
from nasforge.tools.scoring import kendall
from nasforge_eigennas import ACTIVATIONS, ActivationSet, MLPResSpace, analytic_ntk, ntk_diagonal
from nasforge_eigennas.gaussian_moments import Moments

ACTS = ActivationSet()
NTK = KernelSpec(output="sum", bn="sample", params="all")


def inputs(n: int = 16, d: int = 8, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


# --- Gaussian moments ---------------------------------------------------------------------
def _pair_reference(name: str, a: float, b: float, c: float, derivative: bool) -> float:
    """E[g(u)g(v)] by nested adaptive quadrature on the conditional Gaussian."""
    g = ACTS.derivative(name) if derivative else ACTS.value(name)
    s = math.sqrt(max(b - c * c / a, 0.0))

    def inner(u: float) -> float:
        m = c / a * u
        return quad(
            lambda v: (
                float(g(np.array(v))) * math.exp(-((v - m) ** 2) / (2 * s * s)) / (math.sqrt(2 * math.pi) * s)
            ),
            m - 12 * s,
            m + 12 * s,
            points=[0.0] if abs(m) < 12 * s else None,
            limit=200,
        )[0]

    sd = math.sqrt(a)
    return quad(
        lambda u: float(g(np.array(u))) * inner(u) * math.exp(-u * u / (2 * a)) / math.sqrt(2 * math.pi * a),
        -12 * sd,
        12 * sd,
        points=[0.0],
        limit=200,
    )[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize(
    ("a", "b", "c"), [(1.0, 1.0, 0.5), (10.0, 8.0, 7.9), (100.0, 50.0, 70.0), (5.0, 5.0, -4.0)]
)
def test_pair_moments_match_nested_quadrature(name: str, a: float, b: float, c: float) -> None:
    """Closed forms (ReLU, LeakyReLU) and the composite rule (smooth ones), large variances included."""
    f, d = Moments(name, ACTS).pair(np.array([a]), np.array([b]), np.array([c]))
    assert f[0] == pytest.approx(_pair_reference(name, a, b, c, False), rel=1e-6, abs=1e-10)
    assert d[0] == pytest.approx(_pair_reference(name, a, b, c, True), rel=1e-6, abs=1e-10)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_one_variable_moments_hold_at_large_variance(name: str) -> None:
    """Where Gauss-Hermite in standard units fails (tanh′² at v = 100: 45 % off with 256 nodes)."""
    m = Moments(name, ACTS)
    f, d = ACTS.value(name), ACTS.derivative(name)
    for v in (0.01, 1.0, 100.0, 1e4):
        sd = math.sqrt(v)

        def ref(h, sd=sd, v=v) -> float:
            pts = [0.0, -1, 1, -3, 3, -8, 8, -20, 20]
            lim = 60 * sd
            return quad(
                lambda x: float(h(np.array(x))) * math.exp(-x * x / (2 * v)) / math.sqrt(2 * math.pi * v),
                -lim,
                lim,
                points=[p for p in pts if abs(p) < lim],
                limit=2000,
            )[0]

        assert float(m.mean(np.array(v))) == pytest.approx(ref(f), rel=1e-6, abs=1e-12)
        assert float(m.second(np.array(v))) == pytest.approx(ref(lambda x: f(x) ** 2), rel=1e-6)
        assert float(m.second_derivative(np.array(v))) == pytest.approx(ref(lambda x: d(x) ** 2), rel=1e-6)


# --- recursion fixtures -------------------------------------------------------------------
def test_diagonal_fixtures() -> None:
    """Research note §3.5: FC ReLU K_ii = L; ReLU all-skip 45.546 (exact) and 20.0 (Lemma 1 as printed)."""
    for depth in range(3, 11):
        assert ntk_diagonal(["relu"] * (depth - 1), [0] * (depth - 2)) == pytest.approx(depth)
    assert ntk_diagonal(["relu"] * 4, [1, 1, 1]) == pytest.approx(45.5457, abs=1e-4)
    assert ntk_diagonal(["relu"] * 4, [1, 1, 1], variant="lemma1") == pytest.approx(20.0)
    seq = [ntk_diagonal(["relu"] * (d - 1), [1] * (d - 2)) for d in range(3, 11)]
    assert seq == pytest.approx([5.637, 15.98, 45.55, 130.5, 375.2, 1082, 3127, 9050], rel=1e-3)


@pytest.mark.slow
def test_matrix_and_scalar_recursions_agree() -> None:
    x = inputs().double().numpy()
    space = MLPResSpace(depth=5)
    for g in [space.sample(random.Random(s)) for s in range(6)]:
        acts, skips = space.split(g)
        for variant in ("exact", "lemma1"):
            k = analytic_ntk(x, acts, skips, variant=variant)
            assert np.allclose(np.diag(k), ntk_diagonal(acts, skips, variant=variant), rtol=1e-9)
            assert np.allclose(k, k.T) and np.linalg.eigvalsh(k)[0] > 0


@pytest.mark.slow
def test_the_correction_vanishes_without_skips_and_matters_with_them() -> None:
    x = inputs().double().numpy()
    acts = ["swish", "relu", "tanh", "leaky_relu"]
    fc = [analytic_ntk(x, acts, [0, 0, 0], variant=v) for v in ("exact", "lemma1")]
    assert np.allclose(fc[0], fc[1], rtol=1e-12)
    res = [analytic_ntk(x, acts, [1, 1, 1], variant=v) for v in ("exact", "lemma1")]
    assert np.linalg.norm(res[0] - res[1]) / np.linalg.norm(res[0]) > 0.3


def test_odd_activations_have_no_mean_term() -> None:
    """With tanh and shifted sigmoid everywhere E[σ] = 0: the corrected forward kernel equals
    the printed one, only the forward factors of the NTK sum differ."""
    acts = ["tanh", "sigmoid", "tanh"]
    assert Moments("tanh", ACTS).mean(np.array(3.0)) == pytest.approx(0.0, abs=1e-15)
    exact, literal = ntk_diagonal(acts, [1, 1]), ntk_diagonal(acts, [1, 1], variant="lemma1")
    assert exact > literal  # accumulated forward factors only add


# --- against the networks -----------------------------------------------------------------
def _empirical_diag(space: MLPResSpace, g, width: int, seed: int = 0) -> np.ndarray:
    model = seeded_build(lambda: space.build(g, width=width, num_classes=1, in_features=8), seed)
    return torch.diagonal(empirical_ntk(model, inputs(), spec=NTK)).numpy()


def _depth3_mismatch(width: int, genotypes) -> float:
    space = MLPResSpace(depth=3)
    return max(abs(_empirical_diag(space, g, width).mean() / space.ntk_diagonal(g) - 1) for g in genotypes)


def test_recursion_matches_the_network_diagonal_fast() -> None:
    """Every activation in both layers and both skips once (10 architectures), width 512."""
    space = MLPResSpace(depth=3)
    picks = [
        space.from_parts([a, b], [s])
        for a, b, s in zip(ACTIVATIONS, ACTIVATIONS[1:] + ACTIVATIONS[:1], [0, 1, 0, 1, 0], strict=True)
    ]
    picks += [space.from_parts([a, a], [1 - i % 2]) for i, a in enumerate(ACTIVATIONS)]
    assert _depth3_mismatch(512, picks) < 0.06


@pytest.mark.slow
def test_recursion_matches_the_network_diagonal_every_depth3_architecture_width_2048() -> None:
    """All 50 depth-3 architectures (about 35 s on one core); measured worst: 2.4 %."""
    space = MLPResSpace(depth=3)
    assert _depth3_mismatch(2048, list(space.enumerate())) < 0.05


def test_full_kernel_matches_the_network_with_skips() -> None:
    """The corrected recursion (not Lemma 1 as printed) is the network's NTK with skips on."""
    space = MLPResSpace(depth=4)
    g = space.parse("relu|swish+skip|leaky_relu+skip")
    acts, skips = space.split(g)
    x = inputs()
    emp = np.mean(
        [
            empirical_ntk(
                seeded_build(lambda: space.build(g, width=1024, num_classes=1, in_features=8), s), x, spec=NTK
            ).numpy()
            for s in range(2)
        ],
        axis=0,
    )
    err = {
        v: np.linalg.norm(analytic_ntk(x.double().numpy(), acts, skips, variant=v) - emp)
        / np.linalg.norm(emp)
        for v in ("exact", "lemma1")
    }
    assert err["exact"] < 0.1 < 0.3 < err["lemma1"]  # measured: 6.8 % and 60 %


# --- ranking --------------------------------------------------------------------------------
def _tau(depth: int, n: int, n_inputs: int = 16) -> float:
    space = MLPResSpace(depth=depth)
    rng = random.Random(0)
    pool: dict = {}
    while len(pool) < n:
        pool.setdefault(space.sample(rng))
    x = np.random.default_rng(0).standard_normal((n_inputs, 8))
    lmin = [np.linalg.eigvalsh(analytic_ntk(x, *space.split(g)))[0] for g in pool]
    cheap = [space.ntk_diagonal(g) for g in pool]
    return kendall(cheap, lmin)


@pytest.mark.slow
def test_cheap_score_ranks_like_lambda_min_fast() -> None:
    """40 depth-4 architectures on 8 inputs (measured τ = 0.88)."""
    assert _tau(depth=4, n=40, n_inputs=8) >= 0.8


@pytest.mark.slow
def test_cheap_score_ranks_like_lambda_min_300_depth5() -> None:
    """Measured: τ = 0.885 (research note: 0.867 on its own sample); about 90 s on one core."""
    assert _tau(depth=5, n=300) >= 0.8

"""Table 1's constants and the Theorem 1/2 bounds, checked against independent numerical integration.

The plugin computes μ_r and f_S/f_T with its own quadrature (composite Gauss-Legendre in
pre-activation units); the references here use scipy's adaptive ``quad`` on the defining
integrals, so a wrong formula or a wrong rule shows up as a mismatch. Fixture values are
research note seed-000 §4.3-4.4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.special import eval_hermitenorm

from nasforge_eigennas import ACTIVATIONS, ActivationSet, beta1, beta2, beta3, hermite_coefficient, mu1
from nasforge_eigennas.bounds import theorem1, theorem2
from nasforge_eigennas.constants import SWISH_BETA2, derivative_energy, variance_bound

ACTS = ActivationSet()


def gauss(f, var: float = 1.0) -> float:
    """E[f(x)], x ~ N(0, var), by adaptive quadrature (split at the kinks)."""
    sd = math.sqrt(var)
    return quad(
        lambda x: float(f(np.array(x))) * math.exp(-x * x / (2 * var)) / math.sqrt(2 * math.pi * var),
        -14 * sd,
        14 * sd,
        points=[0.0],
        limit=400,
        epsabs=1e-13,
    )[0]


def reference_mu(name: str, r: int) -> float:
    f = ACTS.value(name)
    return gauss(lambda x: f(x) * eval_hermitenorm(r, x)) / math.sqrt(math.factorial(r))


@pytest.mark.slow
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("r", range(7))
def test_hermite_coefficients_match_numeric_integration(name: str, r: int) -> None:
    assert hermite_coefficient(name, r) == pytest.approx(reference_mu(name, r), abs=1e-9)


def test_mu1_table_and_closed_forms() -> None:
    table = {"relu": 0.5, "leaky_relu": 0.505, "sigmoid": 0.206621, "tanh": 0.605706, "swish": 0.5}
    for name, value in table.items():
        assert mu1(name) == pytest.approx(value, abs=1e-6)
        assert mu1(name) == pytest.approx(reference_mu(name, 1), abs=1e-9)
    # ReLU: μ_0 = 1/√(2π), μ_2 = 1/(2√π), odd orders >= 3 vanish; LeakyReLU scales them by 1-η
    assert hermite_coefficient("relu", 0) == pytest.approx(1 / math.sqrt(2 * math.pi), abs=1e-12)
    assert hermite_coefficient("relu", 2) == pytest.approx(1 / (2 * math.sqrt(math.pi)), abs=1e-12)
    assert hermite_coefficient("relu", 3) == pytest.approx(0.0, abs=1e-10)
    assert hermite_coefficient("leaky_relu", 4) == pytest.approx(
        0.99 * hermite_coefficient("relu", 4), abs=1e-12
    )
    # Σ μ_r² = E[σ²] (Parseval), checked far enough to see the series converge
    for name in ACTIVATIONS:
        total = sum(hermite_coefficient(name, r) ** 2 for r in range(40))
        assert total == pytest.approx(gauss(lambda x, f=ACTS.value(name): f(x) ** 2), rel=2e-3)


@pytest.mark.slow
def test_beta1_is_the_sup_of_the_forward_gain() -> None:
    """β_1 = sup_v 2E[σ²]/v: attained as v -> 0 (sigmoid, tanh), v -> inf (swish), everywhere (relu)."""
    vs = np.geomspace(1e-4, 1e4, 60)
    for name in ACTIVATIONS:
        f = ACTS.value(name)
        gains = [2 * gauss(lambda x, f=f: f(x) ** 2, v) / v for v in vs]
        assert max(gains) <= beta1(name) * (1 + 1e-6)
        assert max(gains) == pytest.approx(beta1(name), rel=2e-3)


def test_beta2_and_beta3_of_swish_are_pointwise_extremes() -> None:
    d = ACTS.derivative("swish")

    def pair(z: float) -> float:
        return float(d(np.array(z)) ** 2 + d(np.array(-z)) ** 2)

    top = minimize_scalar(lambda z: -pair(z), bounds=(0, 6), method="bounded", options={"xatol": 1e-10})
    assert -top.fun == pytest.approx(1.219614, abs=1e-6)
    assert round(-top.fun, 2) == SWISH_BETA2
    low = min(pair(z) for z in np.linspace(0, 20, 4001))
    assert low == pytest.approx(0.5, abs=1e-12)
    assert beta2("swish") == SWISH_BETA2 and beta3("swish", 5) == 0.5


@pytest.mark.parametrize(
    ("depth", "f_s", "f_t"),
    [(3, 0.064589, 0.584008), (5, 0.036499, 0.303047), (10, 0.006773, 0.054254)],
)
def test_beta3_of_sigmoid_and_tanh_is_f_of_t(depth: int, f_s: float, f_t: float) -> None:
    t = variance_bound(depth)
    assert t == pytest.approx(3 * 1.0001 * 2.0001 ** (depth - 3))
    assert beta3("sigmoid", depth) == pytest.approx(f_s, abs=2e-6)
    assert beta3("tanh", depth) == pytest.approx(f_t, abs=2e-6)
    for name in ("sigmoid", "tanh"):
        d = ACTS.derivative(name)
        assert derivative_energy(name, t) == pytest.approx(2 * gauss(lambda x, d=d: d(x) ** 2, t), rel=1e-9)


def test_leaky_slope_changes_the_constants() -> None:
    acts = ActivationSet(leaky_slope=0.1)
    assert beta1("leaky_relu", acts) == pytest.approx(1.01)
    assert mu1("leaky_relu", acts) == pytest.approx(0.55)
    assert beta3("tanh", 5, acts) == pytest.approx(0.300149, abs=2e-6)


@pytest.mark.parametrize(
    ("acts", "skips", "lower", "upper"),
    [
        (["relu"] * 4, [1, 1, 1], 4.0, 28.0),
        (["tanh"] * 4, [1, 1, 1], 1.623, 216.0),
        (["tanh", "relu", "relu", "relu"], [1, 0, 1], 2.935, 32.0),
        (["leaky_relu", "swish", "tanh", "relu"], [1, 1, 0], 0.9969, 26.32),
    ],
)
def test_theorem1_spot_values(acts, skips, lower, upper) -> None:
    b = theorem1(acts, skips)
    assert b.lower == pytest.approx(lower, abs=1e-3)
    assert b.upper == pytest.approx(upper, abs=1e-2)


def test_theorem1_depth_trends() -> None:
    """§4.4: homogeneous nets; ReLU LB constant 0.5 (α=0) and 2^(L-3) (α=1), UB L and growing."""
    for depth in range(3, 11):
        fc, res = (
            theorem1(["relu"] * (depth - 1), [0] * (depth - 2)),
            theorem1(["relu"] * (depth - 1), [1] * (depth - 2)),
        )
        assert (fc.lower, fc.upper) == pytest.approx((0.5, depth))
        assert res.lower == pytest.approx(2.0 ** (depth - 3))
    sig = [theorem1(["sigmoid"] * (d - 1), [0] * (d - 2)).lower for d in range(3, 11)]
    assert sig == sorted(sig, reverse=True)  # decreasing with depth without skips
    assert theorem1(["swish"] * 9, [1] * 8).upper == pytest.approx(2828, rel=1e-3)
    assert theorem1(["tanh"] * 9, [0] * 8).lower == pytest.approx(5.5e-11, rel=0.02)


def test_theorem2_bounds() -> None:
    b = theorem2(["relu"] * 4, [1, 1, 1])
    assert b.lower == pytest.approx(8.0)  # Π_{i=2}^{4} (1 + 1)
    assert b.upper == pytest.approx(8 + 4 + 2 + 1 + 1)  # Σ_{k=0}^{4} Π_{i=k+2}^{4} (1 + 1)
    plain = theorem2(["tanh", "tanh", "relu", "swish"], [0, 0, 0])
    assert plain.lower == pytest.approx(beta3("tanh", 5) * 1.0 * 0.5)
    assert plain.upper == pytest.approx(2 * 1 * 1.22 + 1 * 1.22 + 1.22 + 1 + 1)


def test_bounds_reject_bad_architectures() -> None:
    with pytest.raises(ValueError, match="skip bits"):
        theorem1(["relu"] * 3, [1])
    with pytest.raises(ValueError, match="unknown activation"):
        theorem2(["gelu", "relu"], [0])

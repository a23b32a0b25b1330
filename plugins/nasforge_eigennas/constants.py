"""Table 1 of Eigen-NAS: the Hermite coefficient μ_1 and the constants β_1, β_2, β_3.

The bounds of Theorems 1 and 2 are products of these per-activation constants, so they
are kept here as the paper states them, with our reading of the table's garbled
row: β_1 bounds G_ii ≤ β_1·A_ii (sup of 2E[σ²]/v), β_2 bounds Ġ_ii from above
(Swish: max_z σ′(z)² + σ′(-z)² = 1.2196, printed 1.22), β_3 from below at pre-activation
variance at most t = 3(1+η²)(2+η²)^(L-3) (f_S(t), f_T(t) for Sigmoid and Tanh, whose
2E[σ′²] falls with the variance; Swish: min_z σ′(z)² + σ′(-z)² = 1/2).

μ_r(σ) = E[σ(z)·He_r(z)/√(r!)] with normalised probabilists' Hermite polynomials; μ_1
does not depend on that normalisation (μ_1 = E[zσ(z)] = E[σ′(z)] by Stein's lemma).
Closed forms where they exist (ReLU 1/2, LeakyReLU (1+η)/2, Swish 1/2), numeric otherwise;
the tests check both against independent numerical integration.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.hermite_e import hermeval

from nasforge_eigennas.activations import (
    DEFAULT_ACTIVATIONS,
    LEAKY_RELU,
    RELU,
    SIGMOID,
    SWISH,
    TANH,
    ActivationSet,
    check_activation,
)
from nasforge_eigennas.gaussian_moments import Moments, gaussian_rule

#: β_2(Swish) as Table 1 prints it; the exact max_z σ′(z)² + σ′(-z)² is 1.219614 (z ≈ 2.40).
SWISH_BETA2 = 1.22
#: β_3(Swish): min_z σ′(z)² + σ′(-z)², exactly 1/2 since swish′(z) + swish′(-z) = 1.
SWISH_BETA3 = 0.5


def hermite_coefficient(name: str, r: int, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    """μ_r(σ) = E_{z~N(0,1)}[σ(z) He_r(z)] / √(r!), by numerical integration."""
    check_activation(name)
    if r < 0:
        raise ValueError(f"Hermite order must be >= 0, got {r}")
    x, w = gaussian_rule(np.zeros(()), np.ones(()))
    coeffs = np.zeros(r + 1)
    coeffs[r] = 1.0
    return float((w * acts.value(name)(x) * hermeval(x, coeffs)).sum() / math.sqrt(math.factorial(r)))


def mu1(name: str, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    """μ_1(σ): closed form for ReLU, LeakyReLU and Swish, numeric for Sigmoid and Tanh."""
    check_activation(name)
    closed = {RELU: 0.5, LEAKY_RELU: (1.0 + acts.leaky_slope) / 2.0, SWISH: 0.5}
    return closed[name] if name in closed else hermite_coefficient(name, 1, acts)


def variance_bound(depth: int, leaky_slope: float = DEFAULT_ACTIVATIONS.leaky_slope) -> float:
    """t = 3(1+η²)(2+η²)^(L-3): the pre-activation variance β_3 is evaluated at (Theorem 1)."""
    if depth < 3:
        raise ValueError(f"depth L must be >= 3, got {depth}")
    eta2 = leaky_slope**2
    return 3.0 * (1.0 + eta2) * (2.0 + eta2) ** (depth - 3)


def derivative_energy(name: str, variance: float, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    """2·E_{x~N(0,y)}[σ′(x)²]; f_S(y) and f_T(y) of Table 1 for Sigmoid and Tanh."""
    return 2.0 * float(Moments(check_activation(name), acts).second_derivative(np.array(float(variance))))


def beta1(name: str, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    check_activation(name)
    eta2 = acts.leaky_slope**2
    return {RELU: 1.0, LEAKY_RELU: 1.0 + eta2, SIGMOID: 1.0 / 8.0, TANH: 2.0, SWISH: 1.0}[name]


def beta2(name: str, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    check_activation(name)
    eta2 = acts.leaky_slope**2
    return {RELU: 1.0, LEAKY_RELU: 1.0 + eta2, SIGMOID: 1.0 / 8.0, TANH: 2.0, SWISH: SWISH_BETA2}[name]


def beta3(name: str, depth: int, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> float:
    """β_3 at depth L: Sigmoid and Tanh through f(t), t = :func:`variance_bound`."""
    check_activation(name)
    if name in (SIGMOID, TANH):
        return derivative_energy(name, variance_bound(depth, acts.leaky_slope), acts)
    eta2 = acts.leaky_slope**2
    return {RELU: 1.0, LEAKY_RELU: 1.0 + eta2, SWISH: SWISH_BETA3}[name]

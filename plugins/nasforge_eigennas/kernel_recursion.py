"""The infinite-width NTK of the activation/skip MLP: Lemma 1 as printed, and corrected.

Eigen-NAS's Lemma 1 gives the limiting kernel of Eq. (1) recursively, but with skips it is
not the NTK of that network (30-76 % Frobenius error against the empirical kernel at width
2048, our check): the input of ``W_l`` is ``f_{l-1}``, whose kernel accumulates the
skipped features, so the forward factors must be those accumulated kernels; and the
residual sum σ(h_l) + f_{l-1} has a cross term 2·E[σ]·mean(f_{l-1}) that vanishes only for
odd activations. ``variant="exact"`` is the corrected recursion (default; it matches the
network within finite-width noise), ``variant="lemma1"`` the paper's as printed.

Both follow the NTK parameterisation P* of :mod:`nasforge_eigennas.network` (N(0, 1)
weights, √(2/m) multipliers after the first layer, unit-norm inputs), the one whose
width limit is this kernel. :func:`ntk_diagonal` is the data-free scalar form: with
‖x‖ = 1 every diagonal entry equals K_ii, so tr(K)/N, Eigen-NAS's score at infinite
width, costs a handful of one-dimensional integrals per architecture.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from nasforge_eigennas.activations import DEFAULT_ACTIVATIONS, ActivationSet, check_activation
from nasforge_eigennas.gaussian_moments import Moments

Variant = Literal["exact", "lemma1"]
VARIANTS: tuple[str, ...] = ("exact", "lemma1")


def check_architecture(
    activations: Sequence[str], skips: Sequence[int]
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """(σ_1..σ_{L-1}, α_1..α_{L-2}) checked: L ≥ 3, known activations, 0/1 skips."""
    acts = tuple(check_activation(a) for a in activations)
    bits = tuple(int(s) for s in skips)
    if len(acts) < 2:
        raise ValueError(f"the network needs depth L >= 3, i.e. at least 2 activations, got {len(acts)}")
    if len(bits) != len(acts) - 1:
        raise ValueError(f"{len(acts)} activations take {len(acts) - 1} skip bits, got {len(bits)}")
    if any(b not in (0, 1) for b in bits):
        raise ValueError(f"skip bits must be 0 or 1, got {list(skips)}")
    return acts, bits


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def _pairwise(m: Moments, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(2E[σσ], 2E[σ′σ′]) over every pair of rows, computed on the upper triangle."""
    n = sigma.shape[0]
    iu = np.triu_indices(n)
    diag = np.diag(sigma)
    f, d = m.pair(diag[iu[0]], diag[iu[1]], sigma[iu])
    out_f, out_d = np.zeros((n, n)), np.zeros((n, n))
    out_f[iu], out_d[iu] = 2.0 * f, 2.0 * d
    out_f.T[iu], out_d.T[iu] = 2.0 * f, 2.0 * d
    return out_f, out_d


def analytic_ntk(
    x: np.ndarray,
    activations: Sequence[str],
    skips: Sequence[int],
    *,
    variant: Variant = "exact",
    acts: ActivationSet = DEFAULT_ACTIVATIONS,
) -> np.ndarray:
    """The (N, N) infinite-width NTK on the rows of ``x`` (normalised to unit norm here).

    Layer l (σ_l) sees pre-activations with kernel Σ_l; E_l = 2E[σ_l σ_l], Ė_l = 2E[σ′_l σ′_l];
    exact: Φ_l = E_l + α_{l-1}(Φ_{l-1} + 2(e_l μ_{l-1}ᵀ + μ_{l-1} e_lᵀ)), Σ_{l+1} = Φ_l;
    K = Φ_{L-1} + Σ_{l=2}^{L-1} Δ_l∘Φ_{l-1} + Δ_1∘XXᵀ with Δ_l = Ė_l∘Π_{j>l}(Ė_j + α_{j-1}).
    lemma1: no mean term, and E in place of Φ in the forward factors.
    """
    _check_variant(variant)
    names, bits = check_architecture(activations, skips)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"x must be (N, d) with N >= 1, got shape {x.shape}")
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    gram = x @ x.T
    sigma = gram
    forward: list[np.ndarray] = []  # the kernel of W_l's input, l = 2..L (index l-2)
    deriv: list[np.ndarray] = []
    phi_prev = mu_prev = None
    for layer, name in enumerate(names, start=1):
        m = Moments(name, acts)
        e_mat, d_mat = _pairwise(m, sigma)
        deriv.append(d_mat)
        alpha = bits[layer - 2] if layer >= 2 else 0
        if variant == "exact":
            e_vec = m.mean(np.diag(sigma))
            if layer == 1 or phi_prev is None or mu_prev is None:
                phi, mu = e_mat, e_vec
            else:
                cross = 2.0 * (np.outer(e_vec, mu_prev) + np.outer(mu_prev, e_vec))
                phi = e_mat + alpha * (phi_prev + cross)
                mu = e_vec + alpha * mu_prev
            phi_prev, mu_prev = phi, mu
            forward.append(phi)
            sigma = phi
        else:
            forward.append(e_mat)
            sigma = e_mat if layer == 1 else e_mat + alpha * sigma
    depth = len(names) + 1
    kernel = forward[-1].copy()
    back = np.ones_like(gram)
    for layer in range(depth - 1, 0, -1):  # Δ_l, from the last hidden layer down
        delta = deriv[layer - 1] * back
        kernel += delta * (gram if layer == 1 else forward[layer - 2])
        alpha = bits[layer - 2] if layer >= 2 else 0
        back = back * (deriv[layer - 1] + alpha)
    return kernel


def ntk_diagonal(
    activations: Sequence[str],
    skips: Sequence[int],
    *,
    variant: Variant = "exact",
    acts: ActivationSet = DEFAULT_ACTIVATIONS,
) -> float:
    """K_ii for any unit-norm input: the data-free infinite-width trace score tr(K)/N.

    Scalar form of :func:`analytic_ntk` (our data-free form of Zhu et al.'s recursion, checked
    against the matrix form): q_l the pre-activation
    variance, S_l = lim ‖f_l‖²/m, M_l the coordinate mean of f_l.
    """
    _check_variant(variant)
    names, bits = check_architecture(activations, skips)
    q = 1.0
    big_s = big_m = 0.0
    forward: list[float] = []  # 2·S_{l} (the kernel of W_{l+1}'s input), or 2E[σ²] for lemma1
    deriv: list[float] = []
    for layer, name in enumerate(names, start=1):
        m = Moments(name, acts)
        var = np.array(q)
        s, e, d = float(m.second(var)), float(m.mean(var)), float(m.second_derivative(var))
        deriv.append(2.0 * d)
        alpha = bits[layer - 2] if layer >= 2 else 0
        if variant == "exact":
            if layer == 1:
                big_s, big_m = s, e
            else:
                big_s, big_m = s + alpha * (big_s + 2.0 * e * big_m), e + alpha * big_m
            forward.append(2.0 * big_s)
            q = 2.0 * big_s
        else:
            forward.append(2.0 * s)
            q = 2.0 * s if layer == 1 else 2.0 * s + alpha * q
    depth = len(names) + 1
    total = forward[-1]
    back = 1.0
    for layer in range(depth - 1, 0, -1):
        total += deriv[layer - 1] * back * (1.0 if layer == 1 else forward[layer - 2])
        alpha = bits[layer - 2] if layer >= 2 else 0
        back *= deriv[layer - 1] + alpha
    return float(total)

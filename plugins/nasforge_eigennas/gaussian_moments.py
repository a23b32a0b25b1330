"""Gaussian expectations of the activations: what the infinite-width kernel recursion is made of.

The recursion needs, per layer, E[σ(u)σ(v)], E[σ′(u)σ′(v)] for (u, v) ~ N(0, [[a, c], [c, b]])
and E[σ(u)] for u ~ N(0, a). ReLU and LeakyReLU have closed forms (arc-cosine kernels);
the smooth activations are integrated numerically.

Why not Gauss-Hermite in standardised variables, as is usual: with skips the pre-activation
variance grows (45 at depth 5 for ReLU everywhere), and then tanh(√a z) is nearly a step in
z, which a Hermite rule with a few hundred nodes misses by 10-100 % (measured: E[tanh′(u)²]
at a = 100 is off by 45 % with 256 nodes). The rule here works in the pre-activation's own
units instead: composite Gauss-Legendre panels whose breakpoints are the union of the
activation's features (0, ±1, ±3, ±8, ±20, where the smooth activations bend) and the Gaussian's
scale (m + s·{0, ±1.5, ±3, ±5, ±8}), so both are resolved whatever the variance. Pairs are
integrated as E_u[f(u)·E[g(v) | u]], both levels with that rule, which stays accurate for
correlations near 1 (the conditional variance then shrinks and the rule follows it).
"""

from __future__ import annotations

import math

import numpy as np

from nasforge_eigennas.activations import LEAKY_RELU, RELU, ActivationSet

_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
#: Where the candidate activations bend (pre-activation units).
_FEATURES = np.array([-20.0, -8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0, 20.0])
#: Panel edges around the Gaussian's mean, in standard deviations.
_GAUSS = np.array([-8.0, -5.0, -3.0, -1.5, 0.0, 1.5, 3.0, 5.0, 8.0])
#: Pairs integrated at once (bounds the nodes x nodes temporaries: ~120² doubles per pair).
_PAIR_CHUNK = 256
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gaussian_rule(mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (each ``(*shape, n)``) with Σ w f(x) ≈ E[f(X)], X ~ N(mean, std²)."""
    m = np.asarray(mean, dtype=np.float64)
    s = np.maximum(np.asarray(std, dtype=np.float64), 1e-12 * (1.0 + np.abs(m)))
    m, s = np.broadcast_arrays(m, s)
    lo, hi = (m - 8.0 * s)[..., None], (m + 8.0 * s)[..., None]
    edges = np.concatenate([np.clip(_FEATURES, lo, hi), m[..., None] + s[..., None] * _GAUSS], axis=-1)
    edges.sort(axis=-1)
    left, right = edges[..., :-1], edges[..., 1:]
    half, mid = 0.5 * (right - left), 0.5 * (right + left)
    x = mid[..., None] + half[..., None] * _GL_X
    z = (x - m[..., None, None]) / s[..., None, None]
    w = half[..., None] * _GL_W * np.exp(-0.5 * z * z) * _INV_SQRT_2PI / s[..., None, None]
    shape = (*m.shape, -1)
    x, w = x.reshape(shape), w.reshape(shape)
    return x, w / w.sum(axis=-1, keepdims=True)  # the ±8σ tail (1e-15) and rounding


class Moments:
    """The Gaussian moments of one activation (closed forms where they exist)."""

    def __init__(self, name: str, acts: ActivationSet) -> None:
        self.name = name
        self.acts = acts
        self.f = acts.value(name)
        self.df = acts.derivative(name)
        self.eta = acts.leaky_slope if name == LEAKY_RELU else 0.0
        self.closed = name in (RELU, LEAKY_RELU)

    # --- one variable --------------------------------------------------------------------
    def mean(self, var: np.ndarray) -> np.ndarray:
        """E[σ(u)], u ~ N(0, var)."""
        var = np.asarray(var, dtype=np.float64)
        if self.closed:
            return (1.0 - self.eta) * np.sqrt(var / (2.0 * math.pi))
        x, w = gaussian_rule(np.zeros_like(var), np.sqrt(var))
        return (w * self.f(x)).sum(axis=-1)

    def second(self, var: np.ndarray) -> np.ndarray:
        """E[σ(u)²]."""
        var = np.asarray(var, dtype=np.float64)
        if self.closed:
            return (1.0 + self.eta**2) * var / 2.0
        x, w = gaussian_rule(np.zeros_like(var), np.sqrt(var))
        return (w * self.f(x) ** 2).sum(axis=-1)

    def second_derivative(self, var: np.ndarray) -> np.ndarray:
        """E[σ′(u)²]."""
        var = np.asarray(var, dtype=np.float64)
        if self.closed:
            return np.full_like(var, (1.0 + self.eta**2) / 2.0)
        x, w = gaussian_rule(np.zeros_like(var), np.sqrt(var))
        return (w * self.df(x) ** 2).sum(axis=-1)

    # --- two variables -------------------------------------------------------------------
    def pair(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(E[σ(u)σ(v)], E[σ′(u)σ′(v)]) for (u, v) ~ N(0, [[a, c], [c, b]]), elementwise."""
        a, b, c = (np.asarray(t, dtype=np.float64) for t in (a, b, c))
        if self.closed:
            return self._pair_closed(a, b, c)
        return self._pair_numeric(a, b, c)

    def _pair_closed(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Arc-cosine kernels; lrelu(z) = ηz + (1-η)relu(z) gives the LeakyReLU ones."""
        root = np.sqrt(np.maximum(a * b, 0.0))
        rho = np.clip(np.divide(c, root, out=np.zeros_like(c), where=root > 0), -1.0, 1.0)
        theta = np.arccos(rho)
        k_relu = root / (2.0 * math.pi) * (np.sin(theta) + (math.pi - theta) * np.cos(theta))
        step = np.where(root > 0, (math.pi - theta) / (2.0 * math.pi), 0.0)
        eta = self.eta
        return eta * c + (1.0 - eta) ** 2 * k_relu, eta + (1.0 - eta) ** 2 * step

    def _pair_numeric(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
        a, b, c = (np.broadcast_to(t, shape).reshape(-1) for t in (a, b, c))
        out_f, out_d = np.empty(a.size), np.empty(a.size)
        for start in range(0, a.size, _PAIR_CHUNK):
            sl = slice(start, start + _PAIR_CHUNK)
            out_f[sl], out_d[sl] = self._pair_chunk(a[sl], b[sl], c[sl])
        return out_f.reshape(shape), out_d.reshape(shape)

    def _pair_chunk(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = np.maximum(a, 1e-300)
        xu, wu = gaussian_rule(np.zeros_like(a), np.sqrt(a))  # (P, n)
        slope = (c / a)[:, None]
        cond_std = np.sqrt(np.maximum(b - c * c / a, 0.0))[:, None]
        xv, wv = gaussian_rule(slope * xu, np.broadcast_to(cond_std, xu.shape))  # (P, n, n)
        inner_f = (wv * self.f(xv)).sum(axis=-1)
        inner_d = (wv * self.df(xv)).sum(axis=-1)
        return (wu * self.f(xu) * inner_f).sum(axis=-1), (wu * self.df(xu) * inner_d).sum(axis=-1)


def moments(name: str, acts: ActivationSet) -> Moments:
    return Moments(name, acts)

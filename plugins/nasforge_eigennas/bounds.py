"""Theorems 1 and 2 of Eigen-NAS: bounds on λ_min of the NTK, as closed-form scores.

The theorems carry a factor Θ(N/d) that cannot hold as N grows (λ_min ≤ K_ii, which does
not depend on N, our reading of Zhu et al. Theorems 1-2), so the bounds are returned with N/d := 1 and every
Θ(·) := 1: numbers to rank architectures by, not to compare with an eigenvalue. Undefined
symbols get the conventions the statement needs (β_1(σ_0) := 1 because G^(1)_ii = ‖x‖² = 1,
α_0 := 0 because layer 1 has no skip, an empty product is 1), and the upper bound's
unbalanced parenthesis gets its only consistent reading (Theorem 1).

Indices follow the paper: σ_1..σ_{L-1} are the hidden activations, α_1..α_{L-2} the skips
(α_{l-1} around hidden layer l).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from nasforge_eigennas.activations import DEFAULT_ACTIVATIONS, ActivationSet
from nasforge_eigennas.constants import beta1, beta2, beta3, mu1
from nasforge_eigennas.kernel_recursion import check_architecture


@attrs.frozen
class Bounds:
    """Lower and upper bound of one theorem (N/d := 1)."""

    lower: float
    upper: float


class _Indexed:
    """σ_p and α_p with the paper's 1-based indices and the conventions for p = 0."""

    def __init__(self, activations: Sequence[str], skips: Sequence[int]) -> None:
        self.sigma, self.alpha = check_architecture(activations, skips)
        self.depth = len(self.sigma) + 1

    def act(self, p: int) -> str | None:
        return None if p == 0 else self.sigma[p - 1]

    def skip(self, p: int) -> int:
        return 0 if p == 0 else self.alpha[p - 1]


def _product(values: list[float]) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out


def theorem1(
    activations: Sequence[str], skips: Sequence[int], *, acts: ActivationSet = DEFAULT_ACTIVATIONS
) -> Bounds:
    """Infinite width:

    LB = 2μ_1(σ_1)² Π_{p=3}^{L} (β_3(σ_{p-1}) + α_{p-2})
    UB = Σ_{l=1}^{L} [β_1(σ_{l-1}) Π_{p=2}^{l-1} (β_1(σ_{p-1}) + α_{p-2})]
                     · Π_{p=l+1}^{L} (β_2(σ_{p-1}) + α_{p-2})
    """
    a = _Indexed(activations, skips)
    depth = a.depth

    def b1(p: int) -> float:
        name = a.act(p)
        return 1.0 if name is None else beta1(name, acts)

    def b2(p: int) -> float:
        name = a.act(p)
        assert name is not None  # p >= 1 below
        return beta2(name, acts)

    lower = (
        2.0
        * mu1(a.sigma[0], acts) ** 2
        * _product([beta3(a.sigma[p - 2], depth, acts) + a.skip(p - 2) for p in range(3, depth + 1)])
    )
    upper = 0.0
    for layer in range(1, depth + 1):
        head = b1(layer - 1) * _product([b1(p - 1) + a.skip(p - 2) for p in range(2, layer)])
        tail = _product([b2(p - 1) + a.skip(p - 2) for p in range(layer + 1, depth + 1)])
        upper += head * tail
    return Bounds(lower, upper)


def theorem2(
    activations: Sequence[str], skips: Sequence[int], *, acts: ActivationSet = DEFAULT_ACTIVATIONS
) -> Bounds:
    """Finite width, N(0, 1/m) weights: LB = Π_{i=2}^{L-1}(β_3(σ_i) + α_{i-1});
    UB = Σ_{k=0}^{L-1} Π_{i=k+2}^{L-1}(β_2(σ_i) + α_{i-1})."""
    a = _Indexed(activations, skips)
    depth = a.depth
    lower = _product([beta3(a.sigma[i - 1], depth, acts) + a.skip(i - 1) for i in range(2, depth)])
    upper = sum(
        _product([beta2(a.sigma[i - 1], acts) + a.skip(i - 1) for i in range(k + 2, depth)])
        for k in range(depth)
    )
    return Bounds(lower, upper)

"""Eigen-NAS (Zhu, Liu, Chrysos, Cevher, NeurIPS 2022): activation/skip search, NTK eigenvalues.

- :class:`MLPResSpace` (space ``mlp-res``): Eq. (1)'s MLP with per-layer activations from
  {relu, leaky_relu, sigmoid, tanh, swish} and per-layer identity skips, a declaration: build,
  enumerate and the supernet DARTS, PR-DARTS, NASI and NESBS search are derived.
- The kernels: :func:`analytic_ntk` (infinite-width NTK, Lemma 1 as printed or corrected),
  :func:`ntk_diagonal` (its data-free diagonal, the near-free score).
- The bounds: :func:`theorem1`, :func:`theorem2` with Table 1's constants
  (:mod:`nasforge_eigennas.constants`).
- Metrics ``eigennas_trace`` (the paper's trace proxy on the loss-gradient Gram),
  ``eigennas_ntk_trace`` (its output-NTK reading) and ``eigennas_ntk_diag``.
- :class:`EigenNas` (strategy ``eigennas``): score a pool, evaluate the top-k, keep the best.
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_eigennas.activations import ACTIVATIONS, ActivationSet
    from nasforge_eigennas.bounds import Bounds, theorem1, theorem2
    from nasforge_eigennas.constants import beta1, beta2, beta3, hermite_coefficient, mu1, variance_bound
    from nasforge_eigennas.kernel_recursion import analytic_ntk, ntk_diagonal
    from nasforge_eigennas.metrics import EigenNasOutputTrace, EigenNasTrace, InfiniteWidthTrace
    from nasforge_eigennas.network import MLPNetwork
    from nasforge_eigennas.pool import draw_candidates, score_candidates
    from nasforge_eigennas.settings import ScoreSettings
    from nasforge_eigennas.space import MLPResSpace
    from nasforge_eigennas.strategy import EigenNas
else:
    lazy_package(__name__)

__all__ = [
    "ACTIVATIONS",
    "ActivationSet",
    "Bounds",
    "EigenNas",
    "EigenNasOutputTrace",
    "EigenNasTrace",
    "InfiniteWidthTrace",
    "MLPNetwork",
    "MLPResSpace",
    "ScoreSettings",
    "analytic_ntk",
    "beta1",
    "beta2",
    "beta3",
    "draw_candidates",
    "hermite_coefficient",
    "mu1",
    "ntk_diagonal",
    "score_candidates",
    "theorem1",
    "theorem2",
    "variance_bound",
]

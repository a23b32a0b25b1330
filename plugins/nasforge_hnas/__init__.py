"""HNAS: hybrid training-free / training-based NAS (Shu et al. 2022; thesis ch. 7).

A pool of architectures is pre-scored with training-free metrics (M and the NTK
condition number κ); BO over the two coefficients (μ, ν) of the non-realizable
objective κ/M + μ F(M² − ν) picks, at each step, the pool's best-scoring unevaluated
architecture, which one real evaluation (the bundled table or short training) rates.

Public pieces: :class:`Hnas` (strategy ``hnas``) configured by :class:`HnasSettings`
(:class:`LoopSettings`, :class:`PoolSettings`, :class:`PoolDraw`), :class:`HnasLoop`,
:func:`hnas_score`, :class:`ExactGP`, :func:`expected_improvement`, :class:`PoolScorer`.
Its evaluator where no tabular benchmark exists, ``short-train``, is the core's (look it
up in the registry).
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_hnas.acquisition import expected_improvement, upper_confidence_bound
    from nasforge_hnas.gp import ExactGP, GPSettings
    from nasforge_hnas.loop import HnasLoop, LoopSettings, Proposal
    from nasforge_hnas.parameterisation import MuNuPlane
    from nasforge_hnas.pool import PoolScorer, ScoredPool
    from nasforge_hnas.pool_cache import PoolCache
    from nasforge_hnas.pool_settings import M_TRACE, PoolSettings
    from nasforge_hnas.score import hnas_score
    from nasforge_hnas.settings import FLAT_OPTIONS, HnasSettings, PoolDraw
    from nasforge_hnas.strategy import Hnas
else:
    lazy_package(__name__)

__all__ = [
    "FLAT_OPTIONS",
    "M_TRACE",
    "ExactGP",
    "GPSettings",
    "Hnas",
    "HnasLoop",
    "HnasSettings",
    "LoopSettings",
    "MuNuPlane",
    "PoolCache",
    "PoolDraw",
    "PoolScorer",
    "PoolSettings",
    "Proposal",
    "ScoredPool",
    "expected_improvement",
    "hnas_score",
    "upper_confidence_bound",
]

"""HNAS: hybrid training-free / training-based NAS (Shu et al. 2022; thesis ch. 7).

A pool of architectures is pre-scored with training-free metrics (M and the NTK
condition number κ); BO over the two coefficients (μ, ν) of the non-realizable
objective κ/M + μ F(M² − ν) picks, at each step, the pool's best-scoring unevaluated
architecture, which one real evaluation (the bundled table or short training) rates.

Public pieces: :class:`Hnas` (strategy ``hnas``), :class:`ShortTrainEvaluator`
(evaluator ``short-train``), :class:`HnasLoop`, :func:`hnas_score`, :class:`ExactGP`,
:func:`expected_improvement`, :class:`PoolScorer` / :class:`PoolSettings`.
"""

from nasforge.short_train import ShortTrainEvaluator
from nasforge_hnas.acquisition import expected_improvement, upper_confidence_bound
from nasforge_hnas.gp import ExactGP, GPSettings
from nasforge_hnas.loop import HnasLoop, LoopSettings, Proposal
from nasforge_hnas.parameterisation import MuNuPlane
from nasforge_hnas.pool import PoolScorer, ScoredPool
from nasforge_hnas.pool_cache import PoolCache
from nasforge_hnas.pool_settings import PoolSettings
from nasforge_hnas.score import hnas_score
from nasforge_hnas.strategy import Hnas

__all__ = [
    "ExactGP",
    "GPSettings",
    "Hnas",
    "HnasLoop",
    "LoopSettings",
    "MuNuPlane",
    "PoolCache",
    "PoolScorer",
    "PoolSettings",
    "Proposal",
    "ScoredPool",
    "ShortTrainEvaluator",
    "expected_improvement",
    "hnas_score",
    "upper_confidence_bound",
]

"""Scoring architectures with training-free metrics: shared passes, caching, correlation.

The CLI's ``nasforge score`` and ``nasforge correlate`` are thin wrappers over
:func:`score_genotypes`, :func:`correlate` and :func:`plot_correlation`; where a sweep runs
(this process, a process pool, a registered executor such as Ray) is
:func:`make_sweep_executor`'s choice (:func:`sweep_for`: a run's). :func:`rank_pool` ranks a
pool for a strategy through the same scorer and the shared cache. On a GPU a sweep is a
pipeline (:mod:`~nasforge.tools.scoring.pipeline`); metrics that score stacks of networks
at once read a :class:`StackedPasses` (:mod:`~nasforge.tools.scoring.stacked`).
"""

from nasforge.tools.scoring.batch import FixedBatch, fixed_batch
from nasforge.tools.scoring.cache import ScoreCache, ScoreKey, default_cache_dir
from nasforge.tools.scoring.correlate import (
    CorrelationResult,
    MetricCorrelation,
    correlate,
    correlate_table,
    sample_genotypes,
)
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.packing import alias
from nasforge.tools.scoring.parallel import (
    ExecutorSweep,
    InProcessSweep,
    ProcessSweep,
    SweepExecutor,
    make_sweep_executor,
    map_chunks,
    sweep_for,
)
from nasforge.tools.scoring.passes import (
    HESSIAN_GRAD,
    INPUT_GRAD,
    LAYER_GRADS,
    RELU_KERNEL,
    TAPS,
    WEIGHT_GRADS,
    MainPass,
    SharedPasses,
)
from nasforge.tools.scoring.pipeline import StageTimes
from nasforge.tools.scoring.plot import plot_correlation
from nasforge.tools.scoring.pool_ranking import Ranking, RankingSettings, rank_pool, resolve_cache
from nasforge.tools.scoring.ranking import aggregate_ranks, normalized_ranks, oriented, rank_order
from nasforge.tools.scoring.scorer import metric_label, score_model
from nasforge.tools.scoring.shared_metric import SharedPassMetric
from nasforge.tools.scoring.stacked import StackedPasses, layer_sum, per_cell_scores
from nasforge.tools.scoring.stats import kendall, rankdata, spearman
from nasforge.tools.scoring.sweep import build_model, resolve_metrics, score_genotypes
from nasforge.tools.scoring.table import ScoreTable

__all__ = [
    "HESSIAN_GRAD",
    "INPUT_GRAD",
    "LAYER_GRADS",
    "RELU_KERNEL",
    "TAPS",
    "WEIGHT_GRADS",
    "CorrelationResult",
    "ExecutorSweep",
    "FixedBatch",
    "InProcessSweep",
    "MainPass",
    "MetricCorrelation",
    "MetricScore",
    "ProcessSweep",
    "Ranking",
    "RankingSettings",
    "ScoreCache",
    "ScoreKey",
    "ScoreTable",
    "SharedPassMetric",
    "SharedPasses",
    "StackedPasses",
    "StageTimes",
    "SweepExecutor",
    "aggregate_ranks",
    "alias",
    "build_model",
    "correlate",
    "correlate_table",
    "default_cache_dir",
    "fixed_batch",
    "kendall",
    "layer_sum",
    "make_sweep_executor",
    "map_chunks",
    "metric_label",
    "normalized_ranks",
    "oriented",
    "per_cell_scores",
    "plot_correlation",
    "rank_order",
    "rank_pool",
    "rankdata",
    "resolve_cache",
    "resolve_metrics",
    "sample_genotypes",
    "score_genotypes",
    "score_model",
    "spearman",
    "sweep_for",
]

"""Run several metrics on one model, sharing passes, with every failure flagged.

Two modes, so the benefit is measurable (benchmarks/metrics_speed.py): ``shared=True``
runs every :class:`SharedPassMetric` against one :class:`SharedPasses`; ``shared=False``
gives each metric its own copy of the model and its own passes, as the zero-cost-nas
reference code does. Other metrics always get their own copy, since a metric may modify
the model it is given.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence

from torch import nn

from nasforge.kernel.device import exact_float32
from nasforge.kernel.metric import Batch, Metric, MetricContext
from nasforge.tools.backends import KernelSpec
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.passes import SharedPasses
from nasforge.tools.scoring.shared_metric import SharedPassMetric


def metric_label(metric: Metric) -> str:
    """The column name of a metric: its name, plus its variant where not the default."""
    return metric.cache_key() if isinstance(metric, SharedPassMetric) else metric.info.name


def _timed(label: str, fn: object) -> MetricScore:
    start = time.perf_counter()
    try:
        value = float(fn())  # type: ignore[operator]
    except Exception as exc:  # flagged, never raised: one bad net must not stop a sweep
        return MetricScore(label, math.nan, time.perf_counter() - start, f"{type(exc).__name__}: {exc}")
    return MetricScore(label, value, time.perf_counter() - start)


def score_model(
    model: nn.Module,
    batch: Batch,
    metrics: Sequence[Metric],
    *,
    ctx: MetricContext,
    shared: bool = True,
) -> dict[str, MetricScore]:
    """Scores of ``model`` on ``batch`` by label; population metrics are skipped here.

    With ``shared=True`` the time of a shared pass is charged to the first metric that
    needs it, so per-metric seconds add up to the wall time.

    Convolutions and matrix products run in full float32 on CUDA
    (:func:`~nasforge.kernel.device.exact_float32`), so a score does not depend on the device.
    """
    with exact_float32():
        return _score_model(model, batch, metrics, ctx=ctx, shared=shared)


def _score_model(
    model: nn.Module, batch: Batch, metrics: Sequence[Metric], *, ctx: MetricContext, shared: bool
) -> dict[str, MetricScore]:
    per_model = [m for m in metrics if not m.info.population]
    out: dict[str, MetricScore] = {}
    passes: SharedPasses | None = None
    if shared:
        needs: frozenset[str] = frozenset()
        kernels: frozenset[KernelSpec] = frozenset()
        diagonals: frozenset[KernelSpec] = frozenset()
        totals: frozenset[KernelSpec] = frozenset()
        for m in per_model:
            if isinstance(m, SharedPassMetric):
                needs |= m.requirements
                kernels |= m.kernel_specs
                diagonals |= m.diagonal_specs
                totals |= m.total_specs
        passes = SharedPasses(
            model, batch, ctx, needs=needs, kernels=kernels, diagonals=diagonals, totals=totals
        )
    for m in per_model:
        label = metric_label(m)
        if passes is not None and isinstance(m, SharedPassMetric):
            out[label] = _timed(label, lambda m=m: m.score_shared(passes))
        else:
            out[label] = _timed(label, lambda m=m: m.score(copy.deepcopy(model), batch, ctx=ctx))
    return out

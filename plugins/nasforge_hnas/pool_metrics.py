"""The training-free numbers HNAS needs of one untrained network: M and κ.

HNAS's non-realizable score uses a metric M and the NTK condition number κ of the same
network on the same batch (thesis eq. 7.7). With the default metric, M_Trace = √(tr Θ/m)
(eq. 7.4, ``metric="m_trace"``), both come from one empirical NTK and one
eigendecomposition, through the core's torch.func backends. Any registered metric can
stand in for M (M_Grad, M_SNIP, M_GraSP, KNAS: thesis Table 7.13); κ then still comes
from the NTK.
"""

from __future__ import annotations

import copy
import math

import attrs
import torch
from torch import nn

from nasforge.kernel.device import exact_float32
from nasforge.kernel.metric import Metric, MetricContext
from nasforge.tools.backends import KernelSpec, empirical_ntk, spectrum


@attrs.frozen
class PoolMetrics:
    """M, κ and the seconds they took, for one architecture."""

    metric: float
    kappa: float
    seconds: float


def kernel_metrics(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, spec: KernelSpec
) -> tuple[float, float]:
    """(M_Trace, κ) from one empirical NTK; NaN/inf are returned, not raised."""
    s = spectrum(empirical_ntk(model, x, y if spec.needs_labels else None, spec=spec))
    trace = math.sqrt(s.trace / s.size) if s.trace >= 0 else math.nan
    return trace, s.condition


def measure(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor],
    *,
    spec: KernelSpec,
    metric: Metric | None,
    ctx: MetricContext,
    kappa: float | None = None,
) -> tuple[float, float]:
    """(M, κ): κ from the NTK (or ``kappa``, already known, with a registered ``metric``),
    M from the NTK too unless ``metric`` is given.

    A registered metric gets its own copy of the model (metrics may modify it).
    """
    x, y = batch
    with exact_float32():  # TF32 convolutions would move the NTK's κ by percents on CUDA
        if metric is None or kappa is None:
            m_trace, kappa = kernel_metrics(model, x, y, spec)
            if metric is None:
                return m_trace, kappa
        value = float(metric.score(copy.deepcopy(model), (x, y), ctx=ctx))
    return value, kappa

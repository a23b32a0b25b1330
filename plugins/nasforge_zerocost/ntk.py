"""Empirical-NTK metrics: trace (HNAS), condition number (TE-NAS), lambda_min (Eigen-NAS).

All three read the same kernel, so with the default settings the shared-pass scorer
computes one NTK and one eigendecomposition for the three of them.

Default kernel: f = Σ_c logits (TE-NAS's choice: label-free, so valid in the random-label
and data-agnostic modes), BatchNorm per sample (the KNAS batch-size-1 pipeline; one
vmapped backward instead of one backward per sample), all trainable parameters (NASI
notes A2). HNAS's true-class logit is ``output="target"``; TE-NAS's coupled-batch BN is
``bn="batch"``; both change the numbers, and the variant goes into cache keys and labels.
"""

from __future__ import annotations

import math
from typing import ClassVar

from nasforge.backends import KernelSpec, Spectrum
from nasforge.metric import MetricInfo
from nasforge.scoring import SharedPasses, SharedPassMetric

DEFAULT_SPEC = KernelSpec(output="sum", bn="sample", params="all", method="jacrev")


class _KernelMetric(SharedPassMetric):
    """A metric of the spectrum of one empirical kernel; settings as in :class:`KernelSpec`."""

    default_spec: ClassVar[KernelSpec] = DEFAULT_SPEC

    def __init__(
        self,
        output: str | None = None,
        bn: str | None = None,
        params: str | None = None,
        method: str | None = None,
    ) -> None:
        d = self.default_spec
        self.spec = KernelSpec(
            output=output or d.output,
            bn=bn or d.bn,
            params=params or d.params,
            method=method or d.method,
            loss=d.loss,
        )

    @property
    def variant(self) -> str:
        # the method changes cost, not the number, so it stays out of the key
        same = KernelSpec(self.spec.output, self.spec.bn, self.spec.params, self.default_spec.method)
        return "" if same == self.default_spec else f"{self.spec.output},{self.spec.bn},{self.spec.params}"

    @property
    def kernel_specs(self) -> frozenset[KernelSpec]:
        return frozenset({self.spec})

    def _spectrum(self, passes: SharedPasses) -> Spectrum:
        return passes.spectrum(self.spec)


class NTKTrace(_KernelMetric):
    """M_Trace = √(tr Θ / m) (HNAS eq. 7.4); Eigen-NAS's trace score up to a monotone map,
    so one metric serves both rankings."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_trace",
        needs_labels=False,
        log_scale=True,
        description="sqrt(trace(NTK)/m) (HNAS)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        s = self._spectrum(passes)
        return math.sqrt(s.trace / s.size) if s.trace >= 0 else float("nan")


class NTKCondition(_KernelMetric):
    """κ = λ_max/λ_min of the empirical NTK (TE-NAS trainability; lower is better).

    A singular kernel (λ_min ≤ 0 in float64) is κ = inf: flagged and ranked worst, rather
    than TE-NAS's silent NaN -> 1e5 substitution.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_cond",
        higher_is_better=False,
        needs_labels=False,
        log_scale=True,
        description="NTK condition number (TE-NAS)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        return self._spectrum(passes).condition


class NTKLambdaMin(_KernelMetric):
    """λ_min of the empirical NTK (Eigen-NAS's object of study, seed 000; higher is better:
    the generalisation bound scales with √(1/λ_min))."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_lambda_min",
        needs_labels=False,
        log_scale=True,
        description="smallest NTK eigenvalue (Eigen-NAS)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        return self._spectrum(passes).lambda_min

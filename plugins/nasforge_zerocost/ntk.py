"""Empirical-NTK metrics: trace (HNAS), condition number (TE-NAS), smallest eigenvalue.

Which kernel Θ = J Jᵀ is a preset (``nasforge.tools.backends.PRESETS``), and the numbers depend
on it strongly (Spearman 0.59 between the TE-NAS kernel's κ and the per-sample one's on
NAS-Bench-201 cells). A metric that carries a paper's name defaults to that paper's
kernel:

- ``ntk_cond`` (TE-NAS): preset ``tenas``, Σ logits of each sample through the train-mode
  batch forwarded together, parameters named "weight";
- ``ntk_trace`` (HNAS's M_Trace): preset ``hnas-code``, the true-class logit, the HNAS
  code's per-layer decomposition of one batch backward, Conv/Linear weights and biases;
- ``ntk_lambda_min``, ``ntk_trace_per_sample``, ``ntk_cond_per_sample``: preset
  ``per-sample`` (Σ logits, each sample forwarded alone, every parameter): label-free,
  the cheapest.

``preset=`` picks another preset and ``output``/``bn``/``params`` override single settings;
a non-default choice goes into the metric's label and so its cache key. Metrics on one
kernel share it: one Jacobian and one eigendecomposition per spec and network. The trace
metrics read only the kernel's diagonal, so they take per-sample gradient norms instead
(no Jacobian; shared with every other diagonal of the same BatchNorm mode and parameters).
"""

from __future__ import annotations

import math
from typing import ClassVar

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.backends import KernelSpec, Spectrum, kernel_preset, preset_name
from nasforge.tools.scoring import SharedPasses, SharedPassMetric

#: The per-sample kernel (the label-free default of metrics that carry no paper's name).
DEFAULT_SPEC = kernel_preset("per-sample")


class _KernelMetric(SharedPassMetric):
    """A metric of the spectrum of one empirical kernel; settings as in :class:`KernelSpec`."""

    default_spec: ClassVar[KernelSpec] = DEFAULT_SPEC

    def __init__(
        self,
        preset: str | None = None,
        output: str | None = None,
        bn: str | None = None,
        params: str | None = None,
        method: str | None = None,
    ) -> None:
        d = self.default_spec if preset is None else kernel_preset(preset)
        self.spec = KernelSpec(
            output=output or d.output,
            bn=bn or d.bn,
            params=params or d.params,
            method=method or self.default_spec.method,
            loss=self.default_spec.loss,
        )

    @property
    def variant(self) -> str:
        # the method changes cost, not the number, so it stays out of the key
        same = KernelSpec(self.spec.output, self.spec.bn, self.spec.params, self.default_spec.method)
        if same == self.default_spec:
            return ""
        return preset_name(self.spec) or f"{self.spec.output},{self.spec.bn},{self.spec.params}"

    @property
    def kernel_specs(self) -> frozenset[KernelSpec]:
        return frozenset({self.spec})

    def _spectrum(self, passes: SharedPasses) -> Spectrum:
        return passes.spectrum(self.spec)


def _m_trace(trace: float, size: int) -> float:
    return math.sqrt(trace / size) if trace >= 0 else float("nan")


class NTKTrace(_KernelMetric):
    """M_Trace = √(tr Θ / m) (HNAS thesis eq. 7.4) on the HNAS code's kernel (preset
    ``hnas-code``: true-class logit, per-layer shares of one train-mode batch backward,
    Conv/Linear weights and biases; needs labels). Eigen-NAS's trace score is a different kernel (the
    loss-gradient Gram) and is not this metric."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_trace",
        needs_labels=True,
        log_scale=True,
        sign="nonnegative",
        description="sqrt(trace(NTK)/m), HNAS code's kernel (HNAS M_Trace)",
        # 3: the trace from per-sample gradient norms, not the kernel (other rounding)
        version="3",
    )
    default_spec: ClassVar[KernelSpec] = kernel_preset("hnas-code")

    @property
    def kernel_specs(self) -> frozenset[KernelSpec]:
        return frozenset()

    @property
    def diagonal_specs(self) -> frozenset[KernelSpec]:
        # only the trace is read: per-sample gradient norms, never the kernel
        return frozenset({self.spec})

    def score_shared(self, passes: SharedPasses) -> float:
        s = passes.norms(self.spec)
        return _m_trace(s.trace, s.size)


class NTKTracePerSample(NTKTrace):
    """√(tr Θ / m) on the per-sample kernel (Σ logits, each sample forwarded alone, all
    parameters): label-free, and what ``ntk_trace`` meant before the HNAS preset."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_trace_per_sample",
        needs_labels=False,
        log_scale=True,
        sign="nonnegative",
        description="sqrt(trace(NTK)/m), per-sample kernel (no paper's)",
        version="2",
    )
    default_spec: ClassVar[KernelSpec] = DEFAULT_SPEC


class NTKCondition(_KernelMetric):
    """κ = λ_max/λ_min of the empirical NTK on TE-NAS's kernel (preset ``tenas``: Σ of one
    sample's logits back-propagated through the train-mode batch forwarded together,
    gradients of the parameters named "weight"); TE-NAS trainability, lower is better.

    A singular kernel (λ_min ≤ 0 in float64) is κ = inf: flagged and ranked worst, rather
    than TE-NAS's silent NaN -> 1e5 substitution.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_cond",
        higher_is_better=False,
        needs_labels=False,
        log_scale=True,
        sign="nonnegative",
        description="NTK condition number, TE-NAS's kernel (TE-NAS)",
        version="2",
    )
    default_spec: ClassVar[KernelSpec] = kernel_preset("tenas")

    def score_shared(self, passes: SharedPasses) -> float:
        return self._spectrum(passes).condition


class NTKConditionPerSample(NTKCondition):
    """κ on the per-sample kernel (Σ logits, each sample forwarded alone, all parameters):
    not TE-NAS's kernel, and what ``ntk_cond`` meant before the TE-NAS preset."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_cond_per_sample",
        higher_is_better=False,
        needs_labels=False,
        log_scale=True,
        sign="nonnegative",
        description="NTK condition number, per-sample kernel (no paper's)",
        version="1",
    )
    default_spec: ClassVar[KernelSpec] = DEFAULT_SPEC


class NTKLambdaMin(_KernelMetric):
    """λ_min of the empirical NTK (per-sample kernel), higher is better.

    The quantity Eigen-NAS's theory bounds, with a generalisation bound of
    order √(1/λ_min); it is not the Eigen-NAS score, which ranks by the trace of the
    loss-gradient Gram matrix, an O(N) upper-bound proxy of λ_min.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ntk_lambda_min",
        needs_labels=False,
        log_scale=True,
        sign="nonnegative",
        description="smallest NTK eigenvalue (the quantity of Eigen-NAS's theory, not its score)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        return self._spectrum(passes).lambda_min

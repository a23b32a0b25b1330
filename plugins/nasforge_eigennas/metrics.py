"""Eigen-NAS's scores as registered metrics: the empirical trace proxy and the infinite-width one.

``eigennas_trace`` is the paper's score (§5.2): λ_min(K) ≤ tr(K)/N, an O(N) upper-bound proxy
of the smallest NTK eigenvalue, on the KNAS pipeline the paper follows, i.e. the Gram
matrix of per-sample cross-entropy gradients, each sample forwarded alone in train mode,
every parameter (as §5.2 reads). Only the kernel's diagonal is read, so it is
taken as per-sample gradient norms, never the Gram matrix; scored with KNAS's MGM (the sum
of the same kernel's entries) and the output-NTK reading below, all three share one
forward. ``output="sum"`` takes the NTK proper (Σ of logits) instead, label-free. It is
divided by N so that batches of different sizes give comparable numbers (the ranking does
not change).

``eigennas_ntk_trace`` is the other reading: the trace of the output NTK J Jᵀ, J the
Jacobian of every logit of every sample (each forwarded alone in train mode, as above),
divided by N: the kernel section 4's theory bounds (there with one output; here its
classes summed, the trace of the N·C x N·C kernel). Label-free; C backward passes per
chunk of samples, so about C times the cost of the loss-gradient reading. Neither the
N·C x N·C matrix nor the Jacobian is formed: the squared norms of the per-sample,
per-logit gradients come layer by layer from activations and output gradients
(``nasforge.tools.backends.sample_grad_norms``).

``eigennas_ntk_diag`` is the same score at infinite width, K_ii from the corrected kernel
recursion: data-free and near-free (a few one-dimensional integrals), defined for the
networks of this plugin's ``mlp-res`` space (NaN for any other network, which ranks last).
"""

from __future__ import annotations

import math
from typing import ClassVar

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.backends import OUTPUTS, KernelSpec
from nasforge.tools.scoring import SharedPasses, SharedPassMetric
from nasforge_eigennas.kernel_recursion import VARIANTS, ntk_diagonal
from nasforge_eigennas.network import MLPNetwork

#: The kernel of the paper's score (and of KNAS's MGM): per-sample loss gradients, all parameters.
TRACE_SPEC = KernelSpec(output="loss", bn="sample", params="all")


class EigenNasTrace(SharedPassMetric):
    """tr(K)/N of the per-sample loss-gradient Gram (Eigen-NAS §5.2); larger is better."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="eigennas_trace",
        needs_labels=True,
        log_scale=True,
        sign="nonnegative",
        description="trace/N of the per-sample loss-gradient Gram, samples alone (Eigen-NAS score)",
        # 2: from per-sample gradient norms, not the Gram matrix (the same number, other rounding)
        version="2",
    )

    def __init__(self, output: str = "loss") -> None:
        """``output``: "loss" (the paper's pipeline) or an NTK output ("sum": Σ logits, label-free)."""
        if output not in OUTPUTS:
            raise ValueError(f"eigennas_trace output must be one of {OUTPUTS}, got {output!r}")
        self.spec = KernelSpec(output=output, bn=TRACE_SPEC.bn, params=TRACE_SPEC.params)

    @property
    def variant(self) -> str:
        return "" if self.spec.output == TRACE_SPEC.output else f"output={self.spec.output}"

    @property
    def diagonal_specs(self) -> frozenset[KernelSpec]:
        return frozenset({self.spec})

    def score_shared(self, passes: SharedPasses) -> float:
        s = passes.norms(self.spec)
        return s.trace / s.size if math.isfinite(s.trace) else math.nan


#: The output NTK's kernel: every logit of every sample (forwarded alone), all parameters.
OUTPUT_NTK_SPEC = KernelSpec(output="full", bn="sample", params="all")


class EigenNasOutputTrace(SharedPassMetric):
    """tr(J Jᵀ)/N of the output NTK, J the Jacobian of every logit of every sample (Eigen-NAS's
    section-4 kernel; the module docstring); larger is better."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="eigennas_ntk_trace",
        needs_labels=False,
        log_scale=True,
        sign="nonnegative",
        description="trace/N of the output NTK J J^T over every logit, samples alone (Eigen-NAS theory)",
        # 2: from per-sample gradient norms, not the Jacobian (the same number, other rounding)
        version="2",
    )

    @property
    def diagonal_specs(self) -> frozenset[KernelSpec]:
        return frozenset({OUTPUT_NTK_SPEC})

    def score_shared(self, passes: SharedPasses) -> float:
        trace = passes.norms(OUTPUT_NTK_SPEC).trace
        return trace / int(passes.batch[0].shape[0]) if math.isfinite(trace) else math.nan


class InfiniteWidthTrace(SharedPassMetric):
    """K_ii of the infinite-width NTK of an ``mlp-res`` network (data-free); NaN for other networks."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="eigennas_ntk_diag",
        needs_labels=False,
        needs_data=False,
        log_scale=True,
        sign="nonnegative",
        description="infinite-width NTK diagonal of an mlp-res network (corrected recursion)",
        version="1",
    )

    def __init__(self, variant: str = "exact") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"eigennas_ntk_diag variant must be one of {VARIANTS}, got {variant!r}")

        self.recursion = variant

    @property
    def variant(self) -> str:
        return "" if self.recursion == "exact" else self.recursion

    def score_shared(self, passes: SharedPasses) -> float:
        model = passes.model
        found = model.architecture() if isinstance(model, MLPNetwork) else None
        if found is None:
            return math.nan
        activations, skips, acts = found
        return ntk_diagonal(activations, skips, variant=self.recursion, acts=acts)  # type: ignore[arg-type]

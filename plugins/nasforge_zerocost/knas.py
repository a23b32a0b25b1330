"""KNAS's mean gradient-Gram score, and NASI's proxy: the same formula, two BatchNorms.

Both are ‖m⁻¹ Σ_i ∇_θℓ_i‖², the squared norm of the mean per-sample loss gradient over
all trainable parameters. They differ in what "per-sample" means on a BatchNorm network,
and the values do not transfer (``nasi_proxy`` is 1.0 to 31.6 times ``knas`` on 200
NAS-Bench-201 cells, RESULTS.md, so a NASI ν tuned on one is meaningless for the other):

- ``knas``: the KNAS paper's MGM formula, each sample forwarded alone in train mode
  (batch size 1, BatchNorm on that sample's own statistics). It is the paper's formula,
  not the statistic KNAS's public code computes: as we read that code (Xu et al., ICML
  2021, public implementation), it keeps the first 100 gradient entries of at most 11
  parameter tensors and sums centred split-half products of 50 single-sample gradients, a
  covariance-like number
  that is not the mean of the Gram matrix. That statistic is not implemented here.
- ``nasi_proxy``: NASI's ‖Θ̃₀(A)‖_tr (eq. 12), the gradient of the batch-mean loss with
  the batch forwarded together (train-mode BatchNorm on batch statistics), one backward.

They are the same number only on a network with no batch coupling (no train-mode BN).
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
import torch.nn.functional as F

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.backends import KernelSpec, batch_norm_mode
from nasforge.tools.scoring import SharedPasses, SharedPassMetric
from nasforge_zerocost.ntk import DEFAULT_SPEC, _KernelMetric

VARIANTS = ("mgm", "thesis")


class Knas(_KernelMetric):
    """MGM = m⁻² Σ_ij ⟨∇_θℓ_i, ∇_θℓ_j⟩ = ‖m⁻¹ Σ_i ∇_θℓ_i‖², per-sample loss gradients.

    The KNAS paper's definition (not its code's statistic: module docstring) with a
    batch-size-1 pipeline: per-sample cross-entropy gradients, each sample forwarded alone
    in train mode, all parameters. It is NASI's
    proxy only without BatchNorm coupling; NASI's batch-statistics form is ``nasi_proxy``
    (``bn="batch"`` here gives the same number through the full Jacobian, at m times the
    cost). ``variant="thesis"`` is the HNAS appendix form √|1ᵀΘ1|/m on the NTK (the
    per-sample Σ-logits kernel), which Theorem 7.1 bounds by M_Trace.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="knas",
        log_scale=True,
        sign="nonnegative",
        description="mean of the per-sample loss-gradient Gram, samples alone (KNAS paper's MGM formula)",
        # 2: the Gram's sum as the squared norm of the summed gradient, not the Gram (other rounding)
        version="2",
    )
    default_spec: ClassVar[KernelSpec] = KernelSpec(output="loss", bn="sample", params="all")

    def __init__(self, variant: str = "mgm", **spec: str) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"knas variant must be one of {VARIANTS}, got {variant!r}")
        self._variant = variant
        if variant == "thesis":
            spec = {"output": DEFAULT_SPEC.output, **spec}
        super().__init__(**spec)

    @property
    def variant(self) -> str:
        base = super().variant
        if self._variant == "mgm":
            return base
        return f"thesis,{base}" if base else "thesis"

    @property
    def kernel_specs(self) -> frozenset[KernelSpec]:
        return frozenset()

    @property
    def total_specs(self) -> frozenset[KernelSpec]:
        # 1ᵀΘ1 = ‖Σ_i ∇ℓ_i‖²: the summed per-sample gradient, never the Gram matrix
        return frozenset({self.spec})

    def score_shared(self, passes: SharedPasses) -> float:
        s = passes.norms(self.spec, total=True)
        total = float("nan") if s.total is None else s.total
        if self._variant == "mgm":
            return total / s.size**2
        return math.sqrt(abs(total)) / s.size


def _batch_loss(logits: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "mse":
        return F.mse_loss(logits, F.one_hot(y, logits.shape[-1]).to(logits.dtype))
    return F.cross_entropy(logits, y)


class NasiProxy(SharedPassMetric):
    """NASI's ‖Θ̃₀(A)‖_tr = ‖∇_θ m⁻¹Σ_i ℓ_i‖² (eq. 12): the batch forwarded together in train
    mode (BatchNorm on batch statistics, running statistics untouched), one backward of
    the batch-mean loss, every trainable parameter, summed in float64.

    The number NASI's penalty and its ν (eqs. 13, 40-41) are calibrated on; KNAS's
    per-sample form is ``knas``.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="nasi_proxy",
        log_scale=True,
        sign="nonnegative",
        description="squared norm of the batch-mean loss gradient, batch-statistics BN (NASI eq. 12)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        model, (x, y) = passes.model, passes.batch
        with batch_norm_mode(model, "batch"):
            params = [p for p in model.parameters() if p.requires_grad]
            with torch.enable_grad():
                loss = _batch_loss(model(x), y, passes.ctx.loss)
            grads = torch.autograd.grad(loss, params, allow_unused=True)
        return float(sum(g.to(torch.float64).pow(2).sum() for g in grads if g is not None))

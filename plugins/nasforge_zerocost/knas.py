"""KNAS (Xu et al. 2021) mean gradient-Gram score, the NASI gradient-norm proxy."""

from __future__ import annotations

import math
from typing import ClassVar

from nasforge.backends import KernelSpec
from nasforge.metric import MetricInfo
from nasforge.scoring import SharedPasses
from nasforge_zerocost.ntk import DEFAULT_SPEC, _KernelMetric

VARIANTS = ("mgm", "thesis")


class Knas(_KernelMetric):
    """MGM = m⁻² Σ_ij ⟨∇_θℓ_i, ∇_θℓ_j⟩ = ‖m⁻¹ Σ_i ∇_θℓ_i‖², per-sample loss gradients.

    The KNAS paper's definition, algebraically NASI's unpenalised proxy (NASI notes §7):
    per-sample cross-entropy gradients with each sample forwarded alone in train mode
    (KNAS's batch-size-1 pipeline), all parameters. ``variant="thesis"`` is the HNAS
    appendix form √|1ᵀΘ1|/m on the NTK (the same kernel as ``ntk_trace``), which Theorem
    7.1 bounds by M_Trace.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="knas",
        log_scale=True,
        description="mean of the per-sample loss-gradient Gram (KNAS/NASI)",
        version="1",
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

    def score_shared(self, passes: SharedPasses) -> float:
        s = self._spectrum(passes)
        if self._variant == "mgm":
            return s.total_sum / s.size**2
        return math.sqrt(abs(s.total_sum)) / s.size

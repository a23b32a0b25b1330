"""Gradient-saliency proxies from one loss gradient: grad_norm, snip, grasp.

All three are the zero-cost-nas (Abdelfattah et al., 2021) variants, summed over the
Conv/Linear weights, because those are what the published NAS-Bench-201 correlations and
the HNAS tables were produced with. The literal thesis forms (|θᵀg| etc.) are degenerate
on BatchNorm networks: a weight followed by BN is scale-invariant, so θᵀ∇_θL = 0 exactly
on it (our measurement over 40 random cells: literal SNIP's Spearman with M_Trace 0.11,
the zero-cost form's 0.80).
"""

from __future__ import annotations

from typing import ClassVar

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring import (
    HESSIAN_GRAD,
    WEIGHT_GRADS,
    SharedPasses,
    SharedPassMetric,
    StackedPasses,
    layer_sum,
)


class GradNorm(SharedPassMetric):
    """Σ_layers ‖∂L/∂W_l‖_F (zero-cost grad_norm; per-layer norms summed, not one global
    norm as in thesis eq. 7.2, to match the published correlations)."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="grad_norm",
        log_scale=True,
        sign="nonnegative",
        description="sum of per-layer gradient norms (zero-cost)",
        version="1",
    )
    needs = frozenset({WEIGHT_GRADS})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        assert main.weight_grads is not None
        return float(sum(g.norm() for g in main.weight_grads))

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: each layer's gradient norm per network, summed."""
        main = passes.main(self.requirements)
        assert main.weight_grads is not None
        k = passes.count
        return layer_sum(
            passes, main.layers, [g.reshape(k, -1).norm(dim=1) for g in main.weight_grads]
        ).tolist()


class Snip(SharedPassMetric):
    """Σ |θ ⊙ ∂L/∂θ| over Conv/Linear weights (SNIP connection sensitivity, zero-cost form;
    the absolute value inside the sum avoids the BN scale-invariance cancellation)."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="snip",
        log_scale=True,
        sign="nonnegative",
        description="sum of |weight x gradient| (zero-cost SNIP)",
        version="1",
    )
    needs = frozenset({WEIGHT_GRADS})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        assert main.weight_grads is not None
        return float(sum((w * g).abs().sum() for w, g in zip(main.weights, main.weight_grads, strict=True)))

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: each layer's Σ|θ ⊙ g| per network, summed."""
        main = passes.main(self.requirements)
        assert main.weight_grads is not None
        k = passes.count
        per_layer = [
            (w * g).abs().reshape(k, -1).sum(1) for w, g in zip(main.weights, main.weight_grads, strict=True)
        ]
        return layer_sum(passes, main.layers, per_layer).tolist()


class Grasp(SharedPassMetric):
    """Σ −θ ⊙ (H g) over Conv/Linear weights, H g by double back-propagation on the batch
    loss (zero-cost GraSP). Batch Hessian, not the thesis's per-sample H_i: the per-sample
    form costs ~4x more on CPU (our measurement) and is not what was published.

    Higher is better: the sign convention under which the zero-cost-nas table reports a
    positive NAS-Bench-201 correlation (0.514 on CIFAR-10). The sign is not fixed: 16 of
    200 NAS-Bench-201 cells score below zero at C=16 on a Gaussian batch of 16 (12 of 40
    on a smaller sample). HNAS's thesis
    uses the magnitude, M_GraSP = |mean θᵀHg|, and so does its code (``abs`` of every
    metric), so HNAS's pool takes |M| of this metric; here the signed form ranks.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="grasp",
        sign="any",
        description="sum of -weight x Hessian-gradient product (zero-cost GraSP)",
        version="1",
    )
    needs = frozenset({WEIGHT_GRADS, HESSIAN_GRAD})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        assert main.hessian_grad is not None
        return float(sum((-w * hg).sum() for w, hg in zip(main.weights, main.hessian_grad, strict=True)))

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: each layer's Σ -θ ⊙ Hg per network, summed."""
        main = passes.main(self.requirements)
        assert main.hessian_grad is not None
        k = passes.count
        per_layer = [
            (-w * hg).reshape(k, -1).sum(1) for w, hg in zip(main.weights, main.hessian_grad, strict=True)
        ]
        return layer_sum(passes, main.layers, per_layer).tolist()

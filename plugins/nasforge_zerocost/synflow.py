"""SynFlow (Tanaka et al. 2020): data-free synaptic flow, the zero-cost paper's recipe."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch.func import functional_call

from nasforge.backends import prunable_layers
from nasforge.metric import MetricInfo
from nasforge.scoring import SharedPasses, SharedPassMetric
from nasforge_zerocost.modes import batch_norm_removed


class Synflow(SharedPassMetric):
    """Σ |θ ⊙ ∂R/∂θ| over Conv/Linear weights, R = Σ f(𝟙; |θ|).

    The zero-cost recipe: every parameter replaced by its absolute value, BatchNorm
    removed, float64, a single all-ones input of the batch's shape. BN removal matters:
    with BN the score loses the depth/width product that makes it predictive; float64
    matters because R reaches 1e30-1e60 on NAS-Bench-201 and overflows float32. Runs
    functionally on converted copies of the tensors, so the caller's model is unchanged.

    Not bit-for-bit the published NAS-Bench-201 numbers: the zero-cost-nas NB201 model
    drops BN only where its ``use_bn`` flag reaches, and its reduction blocks build their
    ReLUConvBN with BN regardless, so the published score keeps (train-mode) BN in the two
    reduction blocks; this removes every BN. The ranking is unaffected (Spearman 0.9998
    between the two on NAS-Bench-201 cells, issue 11).
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="synflow",
        needs_labels=False,
        needs_data=False,
        bn="remove",
        log_scale=True,
        sign="nonnegative",
        description="synaptic flow with |weights|, all-ones input, every BN removed, float64",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        model = passes.model
        x = passes.batch[0]
        weight_names = {f"{n}.weight" if n else "weight" for n, _ in prunable_layers(model)}
        params = {
            n: p.detach().to(torch.float64).abs().requires_grad_(n in weight_names)
            for n, p in model.named_parameters()
        }
        buffers = {n: b.to(torch.float64) if b.is_floating_point() else b for n, b in model.named_buffers()}
        ones = torch.ones((1, *x.shape[1:]), dtype=torch.float64, device=x.device)
        with batch_norm_removed(model), torch.enable_grad():
            r = functional_call(model, (params, buffers), (ones,)).sum()
        # in the model's order, not the set's: set order follows PYTHONHASHSEED, which made
        # the float64 sum (and so the score's last digits) differ from process to process
        live = [p for n, p in params.items() if n in weight_names]
        grads = torch.autograd.grad(r, live, allow_unused=True)
        return float(
            sum((w.detach() * g).abs().sum() for w, g in zip(live, grads, strict=True) if g is not None)
        )

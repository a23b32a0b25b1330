"""Model-size baselines: parameter count and FLOPs.

NAS-Bench-Suite-Zero and the VKDNW re-run found both to be competitive with most
zero-cost proxies on NAS-Bench-201 (FLOPs: Spearman 0.80 on CIFAR-10), so every report
shows them beside the proxies.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch.utils.flop_counter import FlopCounterMode

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring import SharedPasses, SharedPassMetric
from nasforge_zerocost.modes import eval_mode


class Params(SharedPassMetric):
    """Number of trainable parameters (all of them: weights, biases, BN affine).

    The NAS-Bench-201 "params" column counts the same set; data-free.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="params",
        needs_labels=False,
        needs_data=False,
        sign="nonnegative",
        description="number of trainable parameters (baseline)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        return float(sum(p.numel() for p in passes.model.parameters() if p.requires_grad))


class Flops(SharedPassMetric):
    """Forward FLOPs of one sample, in millions, counted by torch's FlopCounterMode.

    Counted from the dispatched aten ops (convolutions and matrix products; one
    multiply-add = 2 FLOPs), so any architecture is covered without per-layer formulas.
    Only the input shape of the batch is used; eval mode so batch-1 BatchNorm is legal.

    A network that knows its count in closed form says so with
    ``forward_flops(input_shape) -> float | None`` (FLOPs of one sample, counted as the
    counter counts them; None where it cannot): NAS-Bench-201's do, which makes this ~50 ms
    cheaper a network (tested equal to the counter).
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="flops",
        needs_labels=False,
        needs_data=False,
        sign="nonnegative",
        description="forward MFLOPs for one sample (baseline)",
        version="1",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        x = passes.batch[0][:1]
        closed_form = getattr(passes.model, "forward_flops", None)
        flops = closed_form(tuple(x.shape[1:])) if callable(closed_form) else None
        if flops is not None:
            return float(flops) / 1e6
        counter = FlopCounterMode(display=False)
        with eval_mode(passes.model), torch.no_grad(), counter:
            passes.model(x)
        return counter.get_total_flops() / 1e6

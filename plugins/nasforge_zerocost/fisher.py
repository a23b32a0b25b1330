"""Fisher (Turner et al. 2020, "BlockSwap"), the zero-cost channel-saliency variant."""

from __future__ import annotations

from typing import ClassVar

from nasforge.metric import MetricInfo
from nasforge.scoring import LAYER_GRADS, SharedPasses, SharedPassMetric


class Fisher(SharedPassMetric):
    """Σ_layers Σ_channels ½·mean_n(Σ_spatial a ⊙ ∂L/∂a)², a = each Conv/Linear output.

    The zero-cost-nas form (the thesis defines no Fisher formula): the Fisher-information
    estimate of removing a whole channel, from one loss backward on the batch.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="fisher", log_scale=True, description="channel Fisher saliency (zero-cost)", version="1"
    )
    needs = frozenset({LAYER_GRADS})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        if main.layer_outputs is None or main.layer_output_grads is None:
            return 0.0
        total = 0.0
        for act, grad in zip(main.layer_outputs, main.layer_output_grads, strict=True):
            prod = act * grad
            per_channel = prod.sum(dim=tuple(range(2, prod.ndim))) if prod.ndim > 2 else prod
            total += float(0.5 * per_channel.pow(2).mean(0).sum())
        return total

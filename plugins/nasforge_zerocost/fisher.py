"""Fisher (Turner et al. 2020, "BlockSwap"): the published zero-cost form and ours.

Both start from the same channel saliency, from one loss backward on the batch:
``s_k = ½·mean_n(Σ_spatial a ⊙ ∂L/∂a)²`` for each output channel k of each Conv/Linear
output ``a`` (the Fisher-information estimate of removing that channel). They differ in
how channels are added up, which changes the ranking (Spearman with NAS-Bench-201 test
accuracy over 1,000 cells: fisher 0.458, fisher_channel 0.337; RESULTS.md):

- ``fisher``, the published number (zero-cost-nas ``fisher``, the one its NAS-Bench-201
  table and the HNAS thesis report): the reference broadcasts each channel's value over
  that channel's weights (``reshape_elements``) before its per-parameter arrays are
  summed, so ``s_k`` counts ``weight[k].numel()`` times (C_in/groups·k_h·k_w for a conv,
  in_features for a linear layer). Wide-fan-in layers weigh more.
- ``fisher_channel``: each channel once, Σ_layers Σ_k s_k.

Both run in train mode (BatchNorm on the batch's statistics), as the reference sets
``net.train()`` before its pass: a model handed over in eval mode is switched for the
pass (a pass of its own, not the shared one) and switched back, its BatchNorm running
statistics untouched (the reference works on a copy).

The thesis defines no Fisher formula (it cites Turner et al. and runs the zero-cost code).
"""

from __future__ import annotations

from typing import ClassVar, cast

import torch

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.backends import batch_norm_mode
from nasforge.tools.scoring import (
    LAYER_GRADS,
    MainPass,
    SharedPasses,
    SharedPassMetric,
    StackedPasses,
    layer_sum,
    per_cell_scores,
)
from nasforge_zerocost.modes import in_train_mode, train_mode


def channel_saliencies(main: MainPass) -> list[torch.Tensor]:
    """``s_k`` of every layer output (one tensor of channels per layer call)."""
    if main.layer_outputs is None or main.layer_output_grads is None:
        return []
    out = []
    for act, grad in zip(main.layer_outputs, main.layer_output_grads, strict=True):
        prod = act * grad
        per_channel = prod.sum(dim=tuple(range(2, prod.ndim))) if prod.ndim > 2 else prod
        out.append(0.5 * per_channel.pow(2).mean(0))
    return out


def train_mode_pass(passes: SharedPasses, needs: frozenset[str]) -> MainPass:
    """The main pass in train mode: the shared one when the model is in train mode, else a
    pass of its own with the model switched to train mode for it (the reference's
    ``net.train()``; the shared pass keeps the mode the caller chose, for other metrics)."""
    if in_train_mode(passes.model):
        return passes.main(needs)
    # batch statistics, as train mode uses, without writing the caller's running statistics
    with train_mode(passes.model), batch_norm_mode(passes.model, "batch"):
        return SharedPasses(passes.model, passes.batch, passes.ctx, needs=needs).main(needs)


class Fisher(SharedPassMetric):
    """Σ_layers weight[k].numel()·Σ_k ½·mean_n(Σ_spatial a ⊙ ∂L/∂a)², a = each Conv/Linear
    output: the published zero-cost Fisher, each channel saliency counted once per weight
    of its channel, as the reference's per-parameter broadcast does (module docstring)."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name="fisher",
        log_scale=True,
        sign="nonnegative",
        description="Fisher channel saliency spread over each channel's weights (zero-cost, published)",
        version="2",
    )
    needs = frozenset({LAYER_GRADS})

    def score_shared(self, passes: SharedPasses) -> float:
        main = train_mode_pass(passes, self.requirements)
        saliencies = channel_saliencies(main)
        fan_in = main.layer_fan_in or ()
        return float(sum(fan * float(s.sum()) for fan, s in zip(fan_in, saliencies, strict=True)))

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: each layer output's channel saliencies per network,
        times the layer's fan-in, summed."""
        return _stacked_saliency(self, passes, spread=True)


class FisherChannel(SharedPassMetric):
    """Σ_layers Σ_channels ½·mean_n(Σ_spatial a ⊙ ∂L/∂a)², each channel counted once.

    Not the published number (that is ``fisher``); the channel-level sum of the same
    saliencies, kept under its own name because earlier nasforge results used it.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="fisher_channel",
        log_scale=True,
        sign="nonnegative",
        description="Fisher channel saliency, each channel once (not the published form)",
        version="1",
    )
    needs = frozenset({LAYER_GRADS})

    def score_shared(self, passes: SharedPasses) -> float:
        return float(
            sum(float(s.sum()) for s in channel_saliencies(train_mode_pass(passes, self.requirements)))
        )

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: each layer output's channel saliencies per network, summed."""
        return _stacked_saliency(self, passes, spread=False)


def _stacked_saliency(metric: SharedPassMetric, passes: StackedPasses, *, spread: bool) -> list[float]:
    """Σ over each network's layer outputs of its channels' saliencies (times the layer's
    fan-in where ``spread``), every network of a stack at once; a stack not in train mode
    goes network by network (``train_mode_pass`` switches each, as the reference does)."""
    if not in_train_mode(passes.module):
        return per_cell_scores(metric, passes)
    main = passes.main(metric.requirements)
    k = passes.count
    layers, values = [], []
    for m, act, grad in main.outputs or ():
        prod = act * grad
        per_channel = prod.sum(dim=tuple(range(2, prod.ndim))) if prod.ndim > 2 else prod
        saliency = 0.5 * per_channel.reshape(per_channel.shape[0], k, -1).pow(2).mean(0).sum(1)
        layers.append(m)
        values.append(saliency.double() * (int(cast(torch.Tensor, m.weight)[0].numel()) if spread else 1))
    return layer_sum(passes, layers, values).tolist()

"""The L2 norm of all weights at initialisation: a deliberately naive metric baseline."""

from __future__ import annotations

import torch
from torch import nn

from nasforge import Batch, Metric, MetricContext, MetricInfo


class WeightNorm(Metric):
    info = MetricInfo(
        name="weight-norm",
        higher_is_better=True,
        needs_labels=False,
        needs_data=False,
        description="L2 norm of the initial weights (example plugin)",
    )

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        with torch.no_grad():
            squares = [(p.double() ** 2).sum() for p in model.parameters()]
            return float(torch.stack(squares).sum().sqrt()) if squares else 0.0

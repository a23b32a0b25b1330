"""Stage D's estimate: an ensemble's loss from supernet-inherited weights (Algorithm 5.1, line 5).

An ensemble's loss cannot come from its members' scores: it needs their per-example
predictions. :class:`SupernetPredictor` computes each architecture's predictions on the
selection split once (weights inherited through the contract's one-hot edge weights,
BatchNorm on batch statistics or recalibrated for the path) and caches them by
assignment; :func:`combine`
averages members as the manifest's combine rule says, and :func:`ensemble_scores`
gives the NLL and error of the combined prediction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from nasforge.kernel.datasets import TensorData
from nasforge.tools.backends import batch_norm_mode
from nasforge_nesbs.config import BN_MODES
from nasforge_nesbs.decisions import ArchEncoding, Assignment


def combine(outputs: Sequence[torch.Tensor], rule: str = "mean-softmax") -> torch.Tensor:
    """Class probabilities [N, C] of an ensemble from its members' logits (uniform weights).

    "mean-softmax": mean of the members' softmax (NES, the thesis's footnote 1);
    "mean-logits": softmax of the mean logits.
    """
    stacked = torch.stack([o.double() for o in outputs])
    if rule == "mean-softmax":
        return torch.softmax(stacked, dim=-1).mean(0)
    if rule == "mean-logits":
        return torch.softmax(stacked.mean(0), dim=-1)
    raise ValueError(f"unknown combine rule {rule!r}")


def prob_scores(probs: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """NLL (mean, nats) and error (%) of class probabilities [N, C] against labels."""
    nll = float(F.nll_loss(probs.clamp_min(1e-12).log(), y.to(probs.device)))
    err = 100.0 * float((probs.argmax(-1) != y.to(probs.device)).double().mean())
    return {"nll": nll, "error": err}


def ensemble_scores(
    outputs: Sequence[torch.Tensor], y: torch.Tensor, rule: str = "mean-softmax"
) -> dict[str, float]:
    return prob_scores(combine(outputs, rule), y)


@contextmanager
def recalibrated_batch_norm(model: nn.Module, calibrate: Callable[[], None]) -> Iterator[None]:
    """Every BatchNorm of ``model`` with running statistics re-estimated from scratch by
    ``calibrate()`` (forward passes, cumulative average), then in eval mode; restored
    exactly on exit, buffers, momentum and mode, so the supernet is left as it was."""
    bns = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    saved = [
        (m.training, m.track_running_stats, m.momentum, m.running_mean, m.running_var, m.num_batches_tracked)
        for m in bns
    ]
    try:
        for m in bns:
            like = m.weight if m.weight is not None else next(model.parameters())
            m.track_running_stats, m.momentum = True, None  # None: the cumulative average
            m.running_mean = torch.zeros(m.num_features, device=like.device)
            m.running_var = torch.ones(m.num_features, device=like.device)
            m.num_batches_tracked = torch.zeros((), dtype=torch.long, device=like.device)
            m.train()
        calibrate()
        for m in bns:
            m.eval()
        yield
    finally:
        for m, (training, track, momentum, mean, var, count) in zip(bns, saved, strict=True):
            m.train(training)
            m.track_running_stats, m.momentum = track, momentum
            m.running_mean, m.running_var, m.num_batches_tracked = mean, var, count


class SupernetPredictor:
    """Per-example logits of architectures with supernet-inherited weights, cached.

    ``bn="batch"`` normalises by each evaluation batch's statistics; ``bn="recalibrate"``
    re-estimates the path's running statistics on the first ``calibration_batches`` batches
    of ``calibration`` (the supernet's training split) and evaluates with them."""

    def __init__(
        self,
        supernet: nn.Module,
        encoding: ArchEncoding,
        data: TensorData,
        *,
        batch_size: int = 512,
        device: str = "cpu",
        bn: str = "batch",
        calibration: TensorData | None = None,
        calibration_batches: int = 8,
        calibration_batch_size: int = 128,
    ) -> None:
        if bn not in BN_MODES or (bn == "recalibrate" and calibration is None):
            raise ValueError(f"bn must be 'batch' or 'recalibrate' (with calibration data), got {bn!r}")
        self.supernet = supernet
        self.encoding = encoding
        self.data = data
        self.batch_size = batch_size
        self.device = torch.device(device)
        self.bn = bn
        self.calibration = calibration
        self.calibration_batches = calibration_batches
        self.calibration_batch_size = calibration_batch_size
        self.cache: dict[Assignment, torch.Tensor] = {}

    def logits(self, a: Assignment) -> torch.Tensor:
        """[N_sel, C] logits of ``a`` (computed once)."""
        if a not in self.cache:
            like = next(iter(self.supernet.arch_parameters())).detach()  # type: ignore[operator]
            w = self.encoding.weights_of(a, like=like)
            with torch.no_grad(), self._normalisation(w):
                out = [
                    self.supernet(self.data.x[i : i + self.batch_size].to(self.device), w, sparse=True).cpu()
                    for i in range(0, len(self.data), self.batch_size)
                ]
            self.cache[a] = torch.cat(out)
        return self.cache[a]

    def _normalisation(self, w: list[torch.Tensor]) -> Any:
        if self.bn == "batch":
            return batch_norm_mode(self.supernet, "batch")
        assert self.calibration is not None
        data, size = self.calibration, self.calibration_batch_size

        def calibrate() -> None:  # the split's first batches: the same for every path
            for k in range(min(self.calibration_batches, math.ceil(len(data) / size))):
                self.supernet(data.x[k * size : (k + 1) * size].to(self.device), w, sparse=True)

        return recalibrated_batch_norm(self.supernet, calibrate)

    def member_scores(self, a: Assignment) -> dict[str, float]:
        return prob_scores(torch.softmax(self.logits(a).double(), -1), self.data.y)

    def ensemble_scores(self, members: Sequence[Assignment], rule: str = "mean-softmax") -> dict[str, float]:
        if not members:
            return {"nll": math.nan, "error": math.nan}
        return ensemble_scores([self.logits(a) for a in members], self.data.y, rule)

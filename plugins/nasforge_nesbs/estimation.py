"""Stage D's estimate: an ensemble's loss from supernet-inherited weights (Algorithm 5.1, line 5).

An ensemble's loss cannot come from its members' scores: it needs their per-example
predictions. :class:`SupernetPredictor` computes each architecture's predictions on the
selection split once (weights inherited through the contract's one-hot edge weights,
BatchNorm on batch statistics, A14) and caches them by assignment; :func:`combine`
averages members as the manifest's combine rule says (A1), and :func:`ensemble_scores`
gives the NLL and error of the combined prediction (A2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.tools.backends import batch_norm_mode
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


class SupernetPredictor:
    """Per-example logits of architectures with supernet-inherited weights, cached."""

    def __init__(
        self,
        supernet: nn.Module,
        encoding: ArchEncoding,
        data: TensorData,
        *,
        batch_size: int = 512,
        device: str = "cpu",
    ) -> None:
        self.supernet = supernet
        self.encoding = encoding
        self.data = data
        self.batch_size = batch_size
        self.device = torch.device(device)
        self.cache: dict[Assignment, torch.Tensor] = {}

    def logits(self, a: Assignment) -> torch.Tensor:
        """[N_sel, C] logits of ``a`` (computed once)."""
        if a not in self.cache:
            like = next(iter(self.supernet.arch_parameters())).detach()  # type: ignore[operator]
            w = self.encoding.weights_of(a, like=like)
            out = []
            with torch.no_grad(), batch_norm_mode(self.supernet, "batch"):
                for start in range(0, len(self.data), self.batch_size):
                    x = self.data.x[start : start + self.batch_size].to(self.device)
                    out.append(self.supernet(x, w, sparse=True).detach().cpu())
            self.cache[a] = torch.cat(out)
        return self.cache[a]

    def member_scores(self, a: Assignment) -> dict[str, float]:
        return prob_scores(torch.softmax(self.logits(a).double(), -1), self.data.y)

    def ensemble_scores(self, members: Sequence[Assignment], rule: str = "mean-softmax") -> dict[str, float]:
        if not members:
            return {"nll": math.nan, "error": math.nan}
        return ensemble_scores([self.logits(a) for a in members], self.data.y, rule)

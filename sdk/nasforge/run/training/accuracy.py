"""Top-k accuracy and a no-grad evaluation pass over in-memory data."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn


def accuracy(logits: torch.Tensor, targets: torch.Tensor, k: int = 1) -> float:
    """Fraction of rows whose target is among the ``k`` largest logits."""
    if logits.shape[0] != targets.shape[0]:
        raise ValueError("logits and targets differ in batch size")
    if logits.shape[0] == 0:
        return float("nan")
    top = logits.topk(min(k, logits.shape[-1]), dim=-1).indices
    return float((top == targets.unsqueeze(-1)).any(-1).float().mean())


@torch.no_grad()
def evaluate(
    model: nn.Module | Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    batch_size: int = 256,
) -> tuple[float, float]:
    """Mean cross-entropy and top-1 accuracy of ``model`` on ``(x, y)``, in eval mode.

    The module's train/eval mode is restored afterwards. ``model`` may also be a plain
    callable (e.g. a supernet forward with fixed edge weights).
    """
    was_training = getattr(model, "training", None)
    if isinstance(model, nn.Module):
        model.eval()
    loss_sum, correct = 0.0, 0.0
    try:
        for start in range(0, x.shape[0], batch_size):
            xb, yb = x[start : start + batch_size], y[start : start + batch_size]
            logits = model(xb)
            loss_sum += float(F.cross_entropy(logits, yb, reduction="sum"))
            correct += float((logits.argmax(-1) == yb).sum())
    finally:
        if isinstance(model, nn.Module) and was_training is not None:
            model.train(was_training)
    n = max(x.shape[0], 1)
    return loss_sum / n, correct / n

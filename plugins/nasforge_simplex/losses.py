"""The two losses a simplex search can optimise, on logits and whatever targets the data has.

Cross-entropy is what classification searches (DARTS, GAEA) use; the half squared error is
the paper's loss, under which a candidate's shared-weight loss is exactly
``(1 - alpha_i)^2 * D_i``. Integer labels become one-hot targets for the squared loss, and
real-valued targets (regression, the paper's teacher-student setting) are used as they are.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from nasforge.kernel.errors import NasforgeError

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def squared_targets(y: torch.Tensor, outputs: int) -> torch.Tensor:
    """Targets of the squared loss: one-hot rows for labels, real values as ``(n, outputs)``."""
    if y.is_floating_point():
        return y.reshape(y.shape[0], -1)
    return F.one_hot(y, outputs).to(torch.get_default_dtype())


def half_squared_error(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``1/2 mean_n sum_c (t - f)^2``: the paper's ``L = 1/2 E[(y - f)^2]`` per output row."""
    target = squared_targets(y, logits.shape[-1]).to(logits.dtype)
    if target.shape != logits.shape:
        raise NasforgeError(
            f"targets of shape {tuple(target.shape)} do not match outputs {tuple(logits.shape)}"
        )
    return 0.5 * (logits - target).square().sum(dim=-1).mean()


def cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if y.is_floating_point():
        raise NasforgeError(
            "the cross_entropy loss needs integer labels; use -o loss=squared for real targets"
        )
    return F.cross_entropy(logits, y)


def loss_function(name: str) -> LossFn:
    """The loss named ``name`` (cross_entropy or squared)."""
    if name == "cross_entropy":
        return cross_entropy
    if name == "squared":
        return half_squared_error
    raise ValueError(f"unknown loss {name!r}; choose cross_entropy or squared")


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy for labels; NaN for real-valued targets (no classes to hit)."""
    if y.is_floating_point() or y.shape[0] == 0:
        return float("nan")
    return float((logits.argmax(-1) == y).float().mean())

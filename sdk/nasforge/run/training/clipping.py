"""Gradient clipping that reports the pre-clip norm (a cheap divergence diagnostic)."""

from __future__ import annotations

from collections.abc import Iterable

import torch


def clip_gradients(params: Iterable[torch.nn.Parameter], max_norm: float | None) -> float:
    """Clip the global L2 norm of the gradients to ``max_norm`` and return the norm before.

    ``max_norm=None`` only measures. Parameters without gradients are ignored; a
    non-finite norm is returned as is, so the caller can skip the step or stop.
    """
    grads = [p for p in params if p.grad is not None]
    if not grads:
        return 0.0
    if max_norm is None:
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in grads]))
        return float(norm)
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    return float(torch.nn.utils.clip_grad_norm_(grads, max_norm))

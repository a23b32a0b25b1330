"""Straight-through Gumbel-softmax sampling with a private generator (paper App. B.3).

The forward pass sees a hard one-hot sample (the Gumbel-max trick, so with equal logits
the sample is uniform), the backward pass the gradient of the tempered softmax (Jang et
al.'s straight-through estimator). ``torch.nn.functional.gumbel_softmax`` draws from the
global RNG; a search must be reproducible from its own seed, so the noise comes from the
caller's ``torch.Generator`` here. Masked entries (e.g. inputs a DARTS node cannot read)
get probability zero and are never sampled.
"""

from __future__ import annotations

import torch


def gumbel_noise(shape: torch.Size, generator: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """Standard Gumbel(0, 1) noise, -log(-log U), with U kept off 0 and 1."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64)
    u = u.clamp(1e-12, 1.0 - 1e-12)
    return (-torch.log(-torch.log(u))).to(dtype)


def straight_through_gumbel(
    logits: torch.Tensor,
    generator: torch.Generator,
    *,
    tau: float = 1.0,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """A one-hot sample per row of ``logits`` whose gradient is that of softmax((α+g)/τ).

    ``mask`` (bool, same shape) marks allowed entries; every row needs at least one.
    The noise is drawn on the CPU and moved, so a seed gives the same architectures on
    any device.
    """
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    noise = gumbel_noise(logits.shape, generator, logits.dtype).to(logits.device)
    scores = (logits + noise) / tau
    if mask is not None:
        if not bool(mask.any(dim=-1).all()):
            raise ValueError("every row of the mask needs at least one allowed entry")
        scores = scores.masked_fill(~mask, float("-inf"))
    soft = torch.softmax(scores, dim=-1)
    index = soft.detach().argmax(dim=-1, keepdim=True)
    hard = torch.zeros_like(soft).scatter_(-1, index, 1.0)
    return hard - soft.detach() + soft

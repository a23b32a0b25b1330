"""The factorised categorical architecture distribution p_alpha(A) (thesis eqs. 5.6 and 5.7).

One softmax(alpha_d / tau) per decision of an :class:`~nasforge_nesbs.decisions.ArchEncoding`,
stored as one padded [D, Kmax] tensor whose padding is masked out. What NESBS reads off
it: probabilities, MC samples (Algorithm 5.2), the mode, the KL to the uniform prior
(sum_d log K_d - H(p_d)), and straight-through Gumbel-softmax samples for fitting it
(§5.3.3). Every random draw comes from the caller's generator, never torch's global one.
"""

from __future__ import annotations

import math

import torch

from nasforge_nesbs.decisions import ArchEncoding, Assignment

NEG_INF = float("-inf")


def masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with padding set to -inf (so a softmax gives it probability 0)."""
    return logits.masked_fill(~mask.to(logits.device), NEG_INF)


def log_probs(logits: torch.Tensor, mask: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """log softmax(alpha / tau) per decision, [D, Kmax] (padding -inf)."""
    return torch.log_softmax(masked(logits / tau, mask), dim=-1)


def kl_to_uniform(logits: torch.Tensor, mask: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """KL[p_alpha || uniform prior] = sum_d (log K_d - H(p_d)), differentiable in ``logits``."""
    lp = log_probs(logits, mask, tau)
    p = lp.exp()
    entropy = -(p * lp.masked_fill(~mask.to(lp.device), 0.0)).sum(-1)
    sizes = mask.sum(-1).to(lp)
    return (sizes.log() - entropy).sum()


def gumbel(shape: torch.Size, generator: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """Standard Gumbel(0, 1) noise from ``generator`` (U kept off 0 and 1)."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64).clamp(1e-12, 1 - 1e-12)
    return (-torch.log(-torch.log(u))).to(dtype)


def straight_through_sample(
    logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator, *, tau: float = 1.0
) -> torch.Tensor:
    """One architecture as [D, Kmax] rows: one-hot forward, softmax((alpha + g) / tau) backward.

    The noise is drawn on the CPU and moved, so a seed gives the same draws on any device.
    """
    noise = gumbel(logits.shape, generator, logits.dtype).to(logits.device)
    soft = torch.softmax(masked((logits + noise) / tau, mask), dim=-1)
    hard = torch.zeros_like(soft).scatter_(-1, soft.detach().argmax(-1, keepdim=True), 1.0)
    return hard - soft.detach() + soft


class ArchPosterior:
    """p_alpha over an encoding's decisions; ``logits`` [D, Kmax] (padding ignored)."""

    def __init__(
        self, encoding: ArchEncoding, logits: torch.Tensor | None = None, *, tau: float = 1.0
    ) -> None:
        self.encoding = encoding
        self.mask = encoding.mask
        shape = (len(encoding), encoding.max_size)
        self.logits = torch.zeros(shape) if logits is None else logits.detach().cpu().double().clone()
        if tuple(self.logits.shape) != shape:
            raise ValueError(f"logits must have shape {shape}, got {tuple(self.logits.shape)}")
        if tau <= 0:
            raise ValueError(f"tau must be > 0, got {tau}")
        self.tau = tau

    def log_probs(self) -> torch.Tensor:
        return log_probs(self.logits.double(), self.mask, self.tau)

    def probs(self) -> torch.Tensor:
        return self.log_probs().exp()

    def log_prob(self, a: Assignment) -> float:
        lp = self.log_probs()
        return float(sum(lp[d, k] for d, k in enumerate(a)))

    def mode(self) -> Assignment:
        return tuple(int(k) for k in self.log_probs().argmax(-1))

    def sample(self, n: int, generator: torch.Generator) -> list[Assignment]:
        """n i.i.d. architectures (MC sampling, Algorithm 5.2)."""
        p = self.probs()
        draws = torch.multinomial(p, n, replacement=True, generator=generator)  # [D, n]
        return [tuple(int(k) for k in draws[:, i]) for i in range(n)]

    def entropy(self) -> float:
        return math.fsum(math.log(s) for s in self.encoding.sizes) - float(
            kl_to_uniform(self.logits.double(), self.mask, self.tau)
        )

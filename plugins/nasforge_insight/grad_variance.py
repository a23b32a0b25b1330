"""Gradient variance: the sigma^2 of chapter 4's convergence argument (§4.3.2.2).

The chapter explains why wide, shallow cells train faster through the SGD bound of
Ghadimi and Lan, whose second term grows with the gradient variance sigma^2. "Var" of a
vector gradient is left undefined in the text; the trace of the per-example gradient
covariance matches both the bound's sigma^2 and Theorem 4.4 (our reading of §4.3.2.2):

    Var = (1/m) sum_i ||g_i - g_bar||^2,   g_i = grad of the loss of example i.

Two estimators, so either can check the other: ``per_sample`` computes every g_i with
``torch.func`` (``vmap(grad(...))`` over a functional call, in chunks) and streams sums
and sums of squares in float64; ``minibatch`` uses ordinary backward passes only, over K
disjoint batches of size b, ``b/K sum_k ||g_Bk - g_bar||^2`` scaled by ``(n-1)/(n-b)``, the
finite-population correction that makes it unbiased for the same quantity. BatchNorm runs
in eval mode in both (in train mode it couples the examples of a batch, and a
per-example gradient would not exist).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

from nasforge.kernel.converters import to_dict
from nasforge.kernel.errors import NasforgeError

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

log = logging.getLogger("nasforge.insight")


@attrs.frozen
class GradVariance:
    """Trace of the gradient covariance over ``samples`` examples, and how it was estimated.

    ``mean_sq_norm`` is ``||g_bar||^2`` (the signal beside the noise); ``blocks`` splits the
    per-sample value by the parameters' top-level module (Theorem 4.4 is block-wise).
    """

    value: float
    mean_sq_norm: float
    samples: int
    method: str
    blocks: dict[str, float] = attrs.field(factory=dict, converter=to_dict)

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "mean_sq_norm": self.mean_sq_norm,
            "samples": self.samples,
            "method": self.method,
            "blocks": dict(self.blocks),
        }


def _trainable(model: nn.Module) -> dict[str, torch.Tensor]:
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    if not params:
        raise NasforgeError("gradient variance needs a network with trainable parameters")
    return params


class _EvalMode:
    """Eval mode (BatchNorm on running statistics) for the block, then the mode it had."""

    def __init__(self, model: nn.Module) -> None:
        self.model, self.was_training = model, model.training

    def __enter__(self) -> nn.Module:
        self.model.eval()
        return self.model

    def __exit__(self, *exc: object) -> None:
        self.model.train(self.was_training)


def per_sample(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    chunk_size: int = 64,
    loss: Loss = F.cross_entropy,
) -> GradVariance:
    """The exact trace of the per-example gradient covariance over ``(x, y)`` (torch.func)."""
    if len(x) < 2:
        raise NasforgeError("gradient variance needs at least 2 examples")
    with _EvalMode(model):
        params = _trainable(model)
        buffers = dict(model.named_buffers())

        def loss_of_one(p: dict[str, torch.Tensor], xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
            out = functional_call(model, (p, buffers), (xi.unsqueeze(0),))
            return loss(out, yi.unsqueeze(0))

        grads_of = vmap(grad(loss_of_one), in_dims=(None, 0, 0))
        sums = {n: torch.zeros(p.shape, dtype=torch.float64, device=p.device) for n, p in params.items()}
        squares = dict.fromkeys(params, 0.0)
        for start in range(0, len(x), chunk_size):
            xc, yc = x[start : start + chunk_size], y[start : start + chunk_size]
            try:
                grads = grads_of(params, xc, yc)
            except RuntimeError as exc:  # an op vmap cannot batch: one example at a time
                log.debug("vmap failed (%s); per-sample gradients one by one", exc)
                one = grad(loss_of_one)
                parts = [one(params, xc[i], yc[i]) for i in range(len(xc))]
                grads = {n: torch.stack([p[n] for p in parts]) for n in params}
            for n, g in grads.items():
                g64 = g.detach().to(torch.float64)
                sums[n] += g64.sum(0)
                squares[n] += float(g64.square().sum())
    m = len(x)
    blocks: dict[str, float] = {}
    total, mean_sq = 0.0, 0.0
    for n in params:
        mean = sums[n] / m
        part = squares[n] / m - float(mean.square().sum())
        total += part
        mean_sq += float(mean.square().sum())
        block = n.split(".")[0]
        blocks[block] = blocks.get(block, 0.0) + part
    return GradVariance(total, mean_sq, m, "per_sample", blocks)


def minibatch(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    batch_size: int = 16,
    repeats: int = 1,
    generator: torch.Generator | None = None,
    loss: Loss = F.cross_entropy,
) -> GradVariance:
    """The same quantity from mini-batch mean gradients (module docstring).

    The first ``K * batch_size`` examples are used (K = len(x) // batch_size >= 2); each of
    ``repeats`` random partitions into K batches gives one estimate, and they are averaged.
    """
    k = len(x) // batch_size
    if batch_size < 1 or k < 2 or repeats < 1:
        raise NasforgeError(
            f"mini-batch variance needs at least 2 batches of {batch_size}, got {len(x)} examples"
        )
    n = k * batch_size
    x, y = x[:n], y[:n]
    estimates = []
    with _EvalMode(model):
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise NasforgeError("gradient variance needs a network with trainable parameters")
        mean: torch.Tensor | None = None
        for _ in range(repeats):
            order = torch.randperm(n, generator=generator)
            total = torch.zeros((), dtype=torch.float64)
            sq_sum = 0.0
            for b in range(k):
                idx = order[b * batch_size : (b + 1) * batch_size]
                model.zero_grad(set_to_none=True)
                loss(model(x[idx]), y[idx]).backward()
                flat = torch.cat(
                    [(p.grad if p.grad is not None else torch.zeros_like(p)).flatten() for p in params]
                )
                flat = flat.detach().to(torch.float64)
                total = total + flat if total.dim() else flat.clone()
                sq_sum += float(flat.square().sum())
            mean = total / k
            spread = sq_sum - k * float(mean.square().sum())  # sum_k ||g_Bk - g_bar||^2
            estimates.append(batch_size / k * spread * (n - 1) / (n - batch_size))
        model.zero_grad(set_to_none=True)
    assert mean is not None
    return GradVariance(sum(estimates) / len(estimates), float(mean.square().sum()), n, "minibatch")

"""The gradient of the architecture objective with respect to the simplex point alpha.

All three parameterisations are stepped with ``d L / d alpha`` (see
:mod:`nasforge_simplex.parameterisation`), so the three modes below compute exactly that:

- first order (DARTS-1st, GAEA): ``grad_alpha L_val(W, alpha)``, the weights held fixed;
- second order (DARTS unrolled): through one virtual SGD step of the weights,
  ``W' = W - xi grad_W L_train(W, alpha)``:
  ``grad_a L_val(W', a) - xi * [grad_a L_train(W+, a) - grad_a L_train(W-, a)] / (2 eps)``
  with ``W+- = W +- eps u``, ``u = grad_W' L_val(W', alpha)``, ``eps = eps_scale / |u|``
  (the finite-difference Hessian-vector product of Liu et al., 2019, eq. 8);
- single level: ``grad_alpha L(W, alpha)`` on the union of both batches (joint ERM), with
  the weights' gradient from the same loss.

``forward(x, alpha)`` is the supernet's contract forward with dense ops (every op runs,
so even weights at exactly zero receive a gradient, which projection needs to re-enter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from nasforge_simplex.losses import LossFn

Batch = tuple[torch.Tensor, torch.Tensor]
Forward = Callable[[torch.Tensor, Sequence[torch.Tensor]], torch.Tensor]


def leaves(alpha: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Fresh leaf copies of ``alpha`` that record a gradient."""
    return [a.detach().clone().requires_grad_(True) for a in alpha]


def first_order(
    forward: Forward, loss_fn: LossFn, alpha: Sequence[torch.Tensor], val: Batch
) -> tuple[list[torch.Tensor], float]:
    """``grad_alpha L_val(W, alpha)`` and the loss."""
    a = leaves(alpha)
    loss = loss_fn(forward(val[0], a), val[1])
    return list(torch.autograd.grad(loss, a)), float(loss.detach())


def second_order(
    forward: Forward,
    loss_fn: LossFn,
    alpha: Sequence[torch.Tensor],
    weights: Sequence[nn.Parameter],
    train: Batch,
    val: Batch,
    *,
    xi: float,
    eps_scale: float,
) -> tuple[list[torch.Tensor], float]:
    """The unrolled gradient (module docstring); the weights are restored before returning."""
    params = [w for w in weights if w.requires_grad]
    saved = [w.detach().clone() for w in params]
    a_fixed = [x.detach() for x in alpha]
    try:
        train_loss = loss_fn(forward(train[0], a_fixed), train[1])
        g_w = torch.autograd.grad(train_loss, params, allow_unused=True)
        with torch.no_grad():  # the virtual step W' = W - xi * grad
            for w, g in zip(params, g_w, strict=True):
                if g is not None:
                    w.sub_(xi * g)
        a = leaves(alpha)
        val_loss = loss_fn(forward(val[0], a), val[1])
        grads = torch.autograd.grad(val_loss, [*a, *params], allow_unused=True)
        g_alpha = [
            g if g is not None else torch.zeros_like(x) for g, x in zip(grads[: len(a)], a, strict=True)
        ]
        u = [
            g if g is not None else torch.zeros_like(w) for g, w in zip(grads[len(a) :], params, strict=True)
        ]
        norm = torch.sqrt(sum((x.square().sum() for x in u), torch.zeros(()))).item()
        if norm == 0.0:  # nothing flows back through the weights: first order is exact
            return [g.detach() for g in g_alpha], float(val_loss.detach())
        eps = eps_scale / norm

        def train_grad(sign: float) -> list[torch.Tensor]:
            with torch.no_grad():
                for w, s, d in zip(params, saved, u, strict=True):
                    w.copy_(s + sign * eps * d)
            a_ = leaves(alpha)
            loss = loss_fn(forward(train[0], a_), train[1])
            return list(torch.autograd.grad(loss, a_))

        plus, minus = train_grad(1.0), train_grad(-1.0)
        hessian = [(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)]
        return [(g - xi * h).detach() for g, h in zip(g_alpha, hessian, strict=True)], float(
            val_loss.detach()
        )
    finally:
        with torch.no_grad():
            for w, s in zip(params, saved, strict=True):
                w.copy_(s)


def single_level(
    forward: Forward,
    loss_fn: LossFn,
    alpha: Sequence[torch.Tensor],
    weights: Sequence[nn.Parameter],
    batch: Batch,
) -> tuple[list[torch.Tensor], list[torch.Tensor | None], torch.Tensor, float]:
    """Joint gradients ``(grad_alpha, grad_W)`` of one loss on ``batch``, its logits and value."""
    a = leaves(alpha)
    params = list(weights)
    logits = forward(batch[0], a)
    loss = loss_fn(logits, batch[1])
    grads = torch.autograd.grad(loss, [*a, *params], allow_unused=True)
    g_alpha = [g if g is not None else torch.zeros_like(x) for g, x in zip(grads[: len(a)], a, strict=True)]
    return g_alpha, list(grads[len(a) :]), logits.detach(), float(loss.detach())

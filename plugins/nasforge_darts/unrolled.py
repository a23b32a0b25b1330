"""DARTS's second-order architecture gradient, by a finite-difference Hessian-vector product.

For one virtual SGD step ``w' = w - xi * (momentum*buf + grad_w L_train(w, a) + wd*w)``,

    d/da L_val(w', a) = grad_a L_val(w', a) - xi * H_{a,w} L_train(w, a) . grad_w' L_val(w', a),

and the mixed second derivative times a vector ``v`` is approximated by central
differences, ``(grad_a L_train(w + eps v) - grad_a L_train(w - eps v)) / (2 eps)`` with
``eps = 0.01 / |v|``. This costs two extra gradient passes instead of second-order
autograd through the whole supernet. Momentum and weight decay do not depend on ``a``,
so they change ``w'`` but not the correction term.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

LossFn = Callable[[], torch.Tensor]


def _grads(loss: torch.Tensor, params: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    grads = torch.autograd.grad(loss, list(params), allow_unused=True)
    return [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)]


@torch.no_grad()
def _axpy(params: Sequence[torch.Tensor], direction: Sequence[torch.Tensor], scale: float) -> None:
    for p, d in zip(params, direction, strict=True):
        p.add_(d, alpha=scale)


def unrolled_arch_gradient(
    arch_params: Sequence[torch.Tensor],
    weight_params: Sequence[torch.Tensor],
    train_loss: LossFn,
    val_loss: LossFn,
    *,
    xi: float,
    momentum: float = 0.0,
    momentum_buffers: Sequence[torch.Tensor | None] | None = None,
    weight_decay: float = 0.0,
    eps_scale: float = 0.01,
) -> list[torch.Tensor]:
    """The second-order DARTS gradient of ``val_loss`` w.r.t. ``arch_params``.

    ``train_loss`` and ``val_loss`` are closures that run the supernet on a fixed batch
    with the *current* parameter values. The weights are moved in place for the virtual
    step and the two difference passes, and restored exactly before returning.
    """
    weights = list(weight_params)
    backup = [w.detach().clone() for w in weights]
    try:
        g_train = _grads(train_loss(), weights)
        with torch.no_grad():
            for i, (w, g) in enumerate(zip(weights, g_train, strict=True)):
                step = g + weight_decay * w
                buf = None if momentum_buffers is None else momentum_buffers[i]
                if momentum and buf is not None:
                    step = step + momentum * buf
                w.sub_(xi * step)
        loss = val_loss()
        grads = _grads(loss, [*arch_params, *weights])
        d_arch, d_w = grads[: len(arch_params)], grads[len(arch_params) :]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in d_w]))
        if float(norm) == 0.0:
            return d_arch
        eps = eps_scale / float(norm)
        with torch.no_grad():
            for w, b in zip(weights, backup, strict=True):
                w.copy_(b)
        _axpy(weights, d_w, eps)
        g_plus = _grads(train_loss(), arch_params)
        _axpy(weights, d_w, -2.0 * eps)
        g_minus = _grads(train_loss(), arch_params)
        return [da - xi * (gp - gm) / (2.0 * eps) for da, gp, gm in zip(d_arch, g_plus, g_minus, strict=True)]
    finally:
        with torch.no_grad():
            for w, b in zip(weights, backup, strict=True):
                w.copy_(b)

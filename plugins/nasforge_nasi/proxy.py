"""The NASI proxy of the NTK trace norm (paper eq. 12).

‖Θ̃₀(A)‖_tr = ‖b⁻¹ Σ_x ∇_θ L_x‖²: the squared norm of the mean mini-batch loss gradient
at initialisation. It lower-bounds the exact trace up to m/γ (eqs. 10-11) but costs one
backward pass instead of m·n; with ``create_graph=True`` it stays differentiable, which
is what lets NASI take ∇_α of it through the straight-through architecture weights.
No γ or m factor is applied (eqs. 11 and 12 differ by γ⁻¹ against γ⁻²): ν absorbs constants
either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

LOSSES = ("cross_entropy", "mse")


def batch_loss(logits: torch.Tensor, y: torch.Tensor, loss: str = "cross_entropy") -> torch.Tensor:
    """Mean loss over the batch: softmax cross-entropy (the paper's experiments) or MSE
    on one-hot targets (the paper's theory)."""
    if loss == "cross_entropy":
        return F.cross_entropy(logits, y)
    if loss == "mse":
        return F.mse_loss(logits, F.one_hot(y, logits.shape[-1]).to(logits.dtype))
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def trace_proxy(
    forward: Callable[[torch.Tensor], torch.Tensor],
    weights: Sequence[torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    loss: str = "cross_entropy",
    create_graph: bool = False,
) -> torch.Tensor:
    """‖∇_θ mean-loss‖² over ``weights`` (a 0-d tensor; differentiable with ``create_graph``).

    Weights that do not influence the loss (unselected ops) contribute zero, as the
    paper's "weights of the sampled sub-network" requires (it does not list which weights).
    """
    value = batch_loss(forward(x), y, loss)
    grads = torch.autograd.grad(value, list(weights), create_graph=create_graph, allow_unused=True)
    total = value.new_zeros(())
    for g in grads:
        if g is not None:
            total = total + g.pow(2).sum()
    return total

"""The empirical neural tangent kernel Θ = J Jᵀ of an untrained network on one batch.

Returned in float64: condition numbers and smallest eigenvalues of a nearly singular
kernel are meaningless in float32, and the m x m matrix is tiny next to the Jacobian.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import jvp, vjp, vmap

from nasforge.kernel.device import resolve_device
from nasforge.tools.backends.chunking import map_chunks
from nasforge.tools.backends.functional import batch_norm_mode, split_parameters
from nasforge.tools.backends.jacobian import _labels, batch_function, jacobian, joint_jacobians
from nasforge.tools.backends.spec import KernelSpec

#: Columns of J per float64 product; bounds the temporary copy, not the result.
_COLUMN_BLOCK = 1 << 16


def gram(jac: torch.Tensor) -> torch.Tensor:
    """``J Jᵀ`` accumulated in float64 over column blocks (bounded extra memory)."""
    rows = jac.shape[0]
    out = torch.zeros(rows, rows, dtype=torch.float64, device=jac.device)
    for start in range(0, jac.shape[1], _COLUMN_BLOCK):
        block = jac[:, start : start + _COLUMN_BLOCK].to(torch.float64)
        out += block @ block.T
    return out


def _materialised(spec: KernelSpec) -> bool:
    # a decomposed kernel has no product form: its rows come from one batch backward
    return spec.method == "jacrev" or spec.bn == "decomposed"


def empirical_ntk(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    spec: KernelSpec = KernelSpec(),
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
) -> torch.Tensor:
    """The ``(rows, rows)`` float64 kernel of ``spec`` on ``inputs``.

    ``spec.output="loss"`` gives the Gram matrix of per-sample loss gradients (its mean is
    KNAS's MGM with ``bn="sample"`` and NASI's proxy with ``bn="batch"``); the other
    outputs give the NTK proper.
    """
    if _materialised(spec):
        jac = jacobian(model, inputs, targets, spec=spec, chunk_size=chunk_size, device=device)
        return gram(jac)
    return _ntk_by_products(model, inputs, targets, spec=spec, chunk_size=chunk_size, device=device)


def empirical_ntks(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    specs: list[KernelSpec],
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
) -> list[torch.Tensor]:
    """Several kernels of one batch, sharing per-sample forwards where the specs allow."""
    shareable = [s for s in specs if _materialised(s)]
    jacs = iter(
        joint_jacobians(model, inputs, targets, specs=shareable, chunk_size=chunk_size, device=device)
        if shareable
        else []
    )
    return [
        gram(next(jacs))
        if _materialised(s)
        else _ntk_by_products(model, inputs, targets, spec=s, chunk_size=chunk_size, device=device)
        for s in specs
    ]


def _ntk_by_products(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None,
    *,
    spec: KernelSpec,
    chunk_size: int,
    device: str | torch.device | None,
) -> torch.Tensor:
    """Θ e_j = J (Jᵀ e_j) for each basis vector: a vjp then a jvp, vmapped over j.

    Costs a forward and backward per row but never stores J, only ``chunk x P``.
    """
    if spec.needs_labels and targets is None:
        raise ValueError(f"output '{spec.output}' needs targets")
    dev = resolve_device(device)
    x = inputs.to(dev)
    y = _labels(targets, x.shape[0], dev)
    with batch_norm_mode(model, spec.bn):
        params, fixed = split_parameters(model, spec.params, dev)
        f = batch_function(model, fixed, spec, x, y)
        out, pullback = vjp(f, params)  # type: ignore[misc]  # a pair without has_aux
        rows = out.shape[0]

        def column(v: torch.Tensor) -> torch.Tensor:
            (tangent,) = pullback(v)
            return jvp(f, (params,), (tangent,))[1]

        basis = torch.eye(rows, dtype=out.dtype, device=dev)
        cols = map_chunks(lambda a, b: vmap(column)(basis[a:b]), rows, chunk_size)
    theta = torch.cat(cols, dim=0).to(torch.float64)
    return 0.5 * (theta + theta.T)

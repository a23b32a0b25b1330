"""The convergence-factor diagnostic of PR-DARTS's Theorem 1.

The lower-level loss contracts like ``(1 - eta * lambda / 4)`` per step, with
``lambda ~ sum_s (w_conv(s -> last))^2 * prod (w_skip on the way to s)^2``: skip weights
on the shared path speed optimisation up, which is why DARTS's weight step favours skips
and its architecture step follows. This is an SDK adaptation for comparing architectures
and tracking trends, not a calibrated rate (PR-DARTS §3, Theorem 1's lower-level rate). The
path term has two readings (``VARIANTS``): the theorem's printed product over node s's
incoming skips, and its text's chain path through the cell.
"""

from __future__ import annotations

import torch

from nasforge.kernel.supernet_topology import CellTopology

VARIANTS = ("literal", "chain")


def convergence_factor(
    weights: torch.Tensor,
    cell: CellTopology,
    *,
    variant: str = "literal",
    conv: str = "sum",
) -> float:
    """``Lambda(alpha)`` for per-(edge, op) weights (softmax, gate probabilities or 0/1).

    ``literal`` multiplies the skip weights of all edges *into* node ``s`` (the theorem as
    printed); ``chain`` those of the path ``0 -> 1 -> ... -> s`` (as its text reads). The
    last node is the cell's last computed node; a missing edge contributes factor 1 (and
    an edge of a cell without a skip op factor 0). ``conv`` aggregates the cell's
    parametric ops on an edge by ``sum`` or ``max``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if conv not in ("sum", "max"):
        raise ValueError(f"conv must be 'sum' or 'max', got {conv!r}")
    w = weights.detach().double().cpu()
    edges = cell.edges
    rows = {e: i for i, e in enumerate(edges)}
    conv_cols = cell.ops.columns(cell.ops.parametric)
    skip_col = None if cell.ops.skip is None else cell.ops.column(cell.ops.skip)
    last = max(t for _, t in edges)

    def skip_w(s: int, t: int) -> float:
        if (s, t) not in rows:
            return 1.0
        return 0.0 if skip_col is None else float(w[rows[(s, t)], skip_col])

    total = 0.0
    for s in sorted({src for src, t in edges if t == last}):
        row = w[rows[(s, last)], conv_cols]
        c = float(row.sum() if conv == "sum" else row.max())
        prod = 1.0
        if variant == "literal":
            for t in range(s):
                prod *= skip_w(t, s) ** 2
        else:
            for t in range(s):
                prod *= skip_w(t, t + 1) ** 2
        total += c * c * prod
    return total

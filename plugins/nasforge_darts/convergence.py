"""The convergence-factor diagnostic of PR-DARTS's Theorem 1.

The lower-level loss contracts like ``(1 - eta * lambda / 4)`` per step, with
``lambda ~ sum_s (w_conv(s -> last))^2 * prod (w_skip on the way to s)^2``: skip weights
on the shared path speed optimisation up, which is why DARTS's weight step favours skips
and its architecture step follows. This is an SDK adaptation for comparing architectures
and tracking trends, not a calibrated rate (research note 3.1, A7).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

VARIANTS = ("literal", "chain")


def convergence_factor(
    weights: torch.Tensor,
    edges: Sequence[tuple[int, int]],
    op_names: Sequence[str],
    *,
    variant: str = "literal",
    conv: str = "sum",
    skip: str = "skip_connect",
) -> float:
    """``Lambda(alpha)`` for per-(edge, op) weights (softmax, gate probabilities or 0/1).

    ``literal`` multiplies the skip weights of all edges *into* node ``s`` (the theorem as
    printed); ``chain`` those of the path ``0 -> 1 -> ... -> s`` (as its text reads). The
    last node is the cell's last intermediate node; a missing edge contributes factor 1.
    ``conv`` aggregates the parametric ops of an edge by ``sum`` or ``max``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if conv not in ("sum", "max"):
        raise ValueError(f"conv must be 'sum' or 'max', got {conv!r}")
    w = weights.detach().double().cpu()
    rows = {e: i for i, e in enumerate(edges)}
    conv_cols = [i for i, n in enumerate(op_names) if "conv" in n]
    skip_col = list(op_names).index(skip)
    last = max(t for _, t in edges)

    def skip_w(s: int, t: int) -> float:
        return float(w[rows[(s, t)], skip_col]) if (s, t) in rows else 1.0

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

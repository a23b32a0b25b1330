"""PR-DARTS's architecture regularisers: group sparsity and the path-depth reward.

Both act on activation probabilities ``p = P(g != 0)`` (Theorem 3), so they are smooth in
the log-odds. The group term penalises each group's mean probability (skip connections
with a larger weight, removing their unfair advantage); the path term rewards the chance
that a chain of parametric ops runs through the cell, favouring deep cells.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import torch
from attrs import validators as v

from nasforge.kernel.converters import to_tuple

PATH_AGGREGATORS = ("mean", "sum", "union")


@attrs.frozen
class OpGroup:
    """A set of ops penalised together, with its coefficient (lambda)."""

    name: str
    ops: tuple[str, ...] = attrs.field(converter=to_tuple)
    weight: float = attrs.field(converter=float, validator=v.ge(0.0))


def group_penalty(
    probs: torch.Tensor,
    columns: Sequence[int],
    *,
    zeta: float,
    mask: torch.Tensor | None = None,
    hinge: float = 0.0,
) -> torch.Tensor:
    """``zeta * sum_edges mean_{ops in group} p`` (unmasked), or the masked mean (code).

    With ``zeta = 1/|E|`` this is the group's average activation probability. The
    masked form averages only over the (edge, op) pairs sampled this step and is 0 when
    none were; ``hinge`` leaves means below it unpenalised (the official code's 0.2).
    """
    cols = list(columns)
    p = probs[:, cols]
    if mask is None:
        value = zeta * p.mean(dim=1).sum()
    else:
        m = mask[:, cols]
        count = m.sum()
        value = (p * m).sum() / count if float(count) > 0 else p.sum() * 0.0
    return torch.clamp(value - hinge, min=0.0) if hinge > 0 else value


def path_reward(
    probs: torch.Tensor,
    chain: Sequence[int],
    columns: Sequence[int],
    *,
    aggregate: str = "mean",
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Product over the chain edges of each edge's parametric-op activation (eq. 8).

    ``mean`` (default) keeps each factor in [0, 1]; ``sum`` is eq. 8 as printed (up to
    ``|ops|`` per factor); ``union`` is ``1 - prod(1 - p)``, the exact probability that
    some parametric op of the edge is on. With ``mask`` (the code's form) only sampled
    ops count and chain edges with none sampled are skipped; when no chain edge has a
    sampled op the term is 0, as in the official code (not the empty product's 1: either
    way it has no gradient, but the logged loss and reward differ by λ₃).
    """
    if aggregate not in PATH_AGGREGATORS:
        raise ValueError(f"path aggregate must be one of {PATH_AGGREGATORS}, got {aggregate!r}")
    cols = list(columns)
    out = probs.sum() * 0.0 + 1.0
    sampled = 0
    for row in chain:
        p = probs[row, cols]
        if mask is not None:
            m = mask[row, cols]
            if float(m.sum()) == 0:
                continue
            sampled += 1
            factor = (p * m).sum() / m.sum()
        elif aggregate == "mean":
            factor = p.mean()
        elif aggregate == "sum":
            factor = p.sum()
        else:
            factor = 1.0 - torch.prod(1.0 - p)
        out = out * factor
    if mask is not None and not sampled:
        return probs.sum() * 0.0
    return out

"""From continuous edge scores to a discrete cell, under the rule a cell's topology names.

Scores are any per-(edge, op) strengths where larger means keep: DARTS's softmax weights,
PR-DARTS's gate probabilities, NASI's logits. Implemented once here so that every space
that declares a rule gets the same derivation, ties included: one op per edge takes the
row's first maximum; top-k inputs ranks edges strongest first, ties to the lower source,
then the lower column.
"""

from __future__ import annotations

from collections.abc import Collection

import torch

from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge


def discretise(
    cell: CellTopology,
    scores: torch.Tensor,
    *,
    exclude: Collection[str] = (),
    distinct_sources: bool | None = None,
) -> tuple[KeptEdge, ...]:
    """The edges ``cell``'s rule keeps given ``scores`` (shape ``cell.shape``).

    ``exclude`` names ops never kept (PR-DARTS excludes the zero op on NAS-Bench-201);
    ``distinct_sources`` overrides a top-k rule's own setting (ignored by one op per edge).
    Edges come out row by row (one op per edge) or node by node, strongest first (top-k).
    """
    if scores.dim() != 2 or tuple(scores.shape) != cell.shape:
        raise ValueError(
            f"scores of cell '{cell.name}' must have shape {cell.shape}, got {tuple(scores.shape)}"
        )
    unknown = sorted(set(exclude) - set(cell.ops.names))
    if unknown:
        raise ValueError(f"cannot exclude {unknown}: cell '{cell.name}' has ops {cell.ops.names}")
    if isinstance(cell.rule, OneOpPerEdge):
        return _one_op_per_edge(cell, scores, exclude)
    distinct = cell.rule.distinct_sources if distinct_sources is None else distinct_sources
    return _top_k_inputs(cell, scores, cell.rule.k, exclude, distinct)


def _one_op_per_edge(
    cell: CellTopology, scores: torch.Tensor, exclude: Collection[str]
) -> tuple[KeptEdge, ...]:
    s = scores.detach()
    banned = cell.ops.columns(exclude)
    if len(banned) == len(cell.ops.names):
        raise ValueError(f"cell '{cell.name}': every op is excluded")
    if banned:
        s = s.clone()
        s[:, banned] = float("-inf")
    index = s.argmax(dim=-1).tolist()
    return tuple(
        KeptEdge(cell.ops.names[k], src, dst) for k, (src, dst) in zip(index, cell.edges, strict=True)
    )


def _top_k_inputs(
    cell: CellTopology, scores: torch.Tensor, k: int, exclude: Collection[str], distinct: bool
) -> tuple[KeptEdge, ...]:
    never = set(exclude) | ({cell.ops.zero} if cell.ops.zero is not None else set())
    allowed = [i for i, name in enumerate(cell.ops.names) if name not in never]
    if not allowed:
        raise ValueError(f"cell '{cell.name}': every op is excluded")
    s = scores.detach().double().cpu()
    kept: list[KeptEdge] = []
    for node in cell.computed:
        candidates = []  # (score, source, op column)
        for src in cell.sources_of(node):
            row = s[cell.row(src, node)]
            if distinct:
                best = max(allowed, key=lambda i, row=row: (float(row[i]), -i))
                candidates.append((float(row[best]), src, best))
            else:
                candidates.extend((float(row[i]), src, i) for i in allowed)
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        if len(candidates) < k:
            raise ValueError(f"cell '{cell.name}': node {node} has fewer than {k} candidate edges")
        kept.extend(KeptEdge(cell.ops.names[i], src, node) for _, src, i in candidates[:k])
    return tuple(kept)


def one_hot_weights(cell: CellTopology, kept: Collection[KeptEdge], *, like: torch.Tensor) -> torch.Tensor:
    """Edge weights (dtype and device of ``like``, no gradient) that run exactly ``kept``.

    An (op, source) pair a node keeps twice gets weight 2, so the supernet computes what
    the discrete cell does (it sums the two identical edges).
    """
    cell.check_kept(kept)
    w = torch.zeros(cell.shape, dtype=like.dtype, device=like.device)
    for e in kept:
        w[cell.row(e.source, e.target), cell.ops.column(e.op)] += 1.0
    return w

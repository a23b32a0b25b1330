"""From continuous edge scores to a discrete cell, under the rule a cell's topology names.

Scores are any per-(edge, op) strengths where larger means keep: DARTS's softmax weights,
PR-DARTS's gate probabilities, NASI's logits. Implemented once here so that every space
that declares a rule gets the same derivation, ties included: one op per edge takes the
row's first maximum; top-k inputs ranks edges strongest first, ties to the lower source,
then the lower column.

One op per edge can keep the zero op on every path to an output (NB201: node 3's three
edges all ``none``): that cell outputs a constant, and a network of it guesses (10 %
on CIFAR-10). Such a derivation is repaired, with a warning: the zero op on an edge into
the cut-off output from a reached node is replaced by that edge's best other op, the
edge with the highest such score first (ties to the lower row, then column), until
every output is reached. Top-k inputs never keeps the zero op, so it cannot cut one off.
"""

from __future__ import annotations

import warnings
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
    kept = tuple(
        KeptEdge(cell.ops.names[k], src, dst) for k, (src, dst) in zip(index, cell.edges, strict=True)
    )
    return _reconnect(cell, s, kept) if cell.cut_off_outputs(kept) else kept


def _reconnect(cell: CellTopology, scores: torch.Tensor, kept: tuple[KeptEdge, ...]) -> tuple[KeptEdge, ...]:
    """``kept`` with zero-op edges replaced until every output is reached (module docstring).

    ``scores`` has the excluded ops at -inf already; the zero op is never the replacement.
    Edges into a cut-off output from a reached node come first; where none exists, any
    zero-op edge leaving a reached node (the repair then goes on from its target).
    """
    zero = cell.ops.column(cell.ops.zero) if cell.ops.zero is not None else None
    allowed = [i for i in range(scores.shape[1]) if i != zero and float(scores[:, i].max()) > float("-inf")]
    if not allowed:
        return kept  # no op can reconnect it (all excluded): left as derived
    cut = cell.cut_off_outputs(kept)
    edges = list(kept)
    replaced: list[KeptEdge] = []
    while cut:
        reached = cell.reached(edges)
        zero_edges = [r for r, e in enumerate(edges) if e.op == cell.ops.zero and e.source in reached]
        into = [r for r in zero_edges if edges[r].target in cut] or zero_edges
        if not into:
            break
        best = max((float(scores[r, i]), -r, -i) for r in into for i in allowed)
        row, col = -best[1], -best[2]
        edges[row] = KeptEdge(cell.ops.names[col], edges[row].source, edges[row].target)
        replaced.append(edges[row])
        cut = cell.cut_off_outputs(edges)
    fixes = ", ".join(f"{e.op} on edge {e.source}->{e.target}" for e in replaced) or "nothing (no edge left)"
    warnings.warn(
        f"cell '{cell.name}': the derived cell cuts output node(s) {cell.cut_off_outputs(kept)} off from "
        f"its inputs (every path keeps the zero op {cell.ops.zero!r}), so it outputs a constant; "
        f"repaired by keeping {fixes}",
        RuntimeWarning,
        stacklevel=4,
    )
    return tuple(edges)


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
                best = max(allowed, key=lambda i, row=row: (float(row[i]), -i))  # type: ignore[misc]  # row bound
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

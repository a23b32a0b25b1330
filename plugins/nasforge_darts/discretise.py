"""From continuous edge scores to a discrete cell: DARTS's top-2 rule and its variants.

Scores are any per-(edge, op) strengths where larger means keep: DARTS uses the softmax
weights, PR-DARTS the gate activation probabilities (equivalently the raw log-odds).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nasforge_darts.cell_genotype import Edge
from nasforge_darts.primitives import EDGES_PER_NODE, INPUTS, NONE, STEPS, edge_index


def derive_cell(
    scores: torch.Tensor,
    op_names: Sequence[str],
    *,
    k: int = EDGES_PER_NODE,
    exclude: Sequence[str] = (NONE,),
    distinct_sources: bool = True,
) -> tuple[Edge, ...]:
    """Keep ``k`` incoming (op, source) edges per intermediate node.

    ``distinct_sources=True`` is DARTS's rule: rank each incoming edge by its best
    non-excluded op, keep the ``k`` strongest edges and their best op. ``False`` ranks
    all (op, source) pairs together (PR-DARTS's literal wording), so a node may read
    one source twice. Edges come out strongest first; ties go to the lower source/op.
    """
    if scores.dim() != 2 or scores.shape[1] != len(op_names):
        raise ValueError(f"scores must be (edges, {len(op_names)}), got {tuple(scores.shape)}")
    allowed = [i for i, name in enumerate(op_names) if name not in exclude]
    s = scores.detach().double().cpu()
    cell: list[Edge] = []
    for node in range(INPUTS, INPUTS + STEPS):
        candidates = []  # (score, source, op column)
        for src in range(node):
            row = s[edge_index(src, node)]
            if distinct_sources:
                best = max(allowed, key=lambda i, row=row: (float(row[i]), -i))
                candidates.append((float(row[best]), src, best))
            else:
                candidates.extend((float(row[i]), src, i) for i in allowed)
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        if len(candidates) < k:
            raise ValueError(f"node {node} has fewer than {k} candidate edges")
        cell.extend((op_names[i], src) for _, src, i in candidates[:k])
    return tuple(cell)

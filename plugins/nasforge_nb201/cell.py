"""The fixed NAS-Bench-201 cell: a 4-node DAG whose 6 edges each carry one op.

Node 0 is the cell input; node j sums op(node i) over its incoming edges i < j; node 3 is
the output. Edges with ``none`` are kept as modules (a multiply by zero) rather than
pruned, so every cell has the same module tree (``edges.<e>``), which is what lets the
supernet hand its inherited weights to a stand-alone network key for key.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge_nb201.arch import EDGES, NUM_NODES, check_ops
from nasforge_nb201.ops import make_op


class NB201Cell(nn.Module):
    """One cell with a fixed op on each edge, at a fixed channel count."""

    def __init__(self, ops: Sequence[str], channels: int) -> None:
        super().__init__()
        check_ops(ops)
        self.ops = tuple(ops)
        self.edges = nn.ModuleList(make_op(op, channels) for op in ops)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = [x]
        for dst in range(1, NUM_NODES):
            incoming = [self.edges[e](nodes[src]) for e, (d, src) in enumerate(EDGES) if d == dst]
            total = incoming[0]
            for term in incoming[1:]:
                total = total + term
            nodes.append(total)
        return nodes[-1]

    def extra_repr(self) -> str:
        return f"ops={self.ops}"

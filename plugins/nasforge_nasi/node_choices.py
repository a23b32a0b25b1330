"""NASI's choices for a cell whose nodes keep their top-k inputs (the DARTS rule, App. B.2).

NASI samples, per computed node i, one op o_i from the ops a kept edge may hold (all but
the zero op, which a derived cell never keeps) and one input x_k among the node's
sources, independently (DARTS: 4 x 7 op logits and 4 x 5 input logits per cell type,
the inputs masked to the node's sources). The supernet has one mixed op per (input,
node) edge, so a sample becomes the edge weights w[(k, i), o] = w^x_{i,k} * w^o_{i,o}:
with hard one-hot rows that runs exactly op o_i on input x_k, as NASI's node does. The
straight-through gradients are those of this product relaxation, which differs from
NASI's op(sum_k w_k x_k) only in how a non-selected input is linearised; both are
unbiased for the forward pass and both reach every logit (the supernet runs every op
when the weights need gradients and ``sparse`` is off).

The derived cell keeps the top-k ops and the top-k inputs of each node, paired by rank
(our choice: App. B.2 and Fig. 5 do not say how they pair; ``pairing="shared-argmax-op"``
gives every kept input the arg-max op).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, TopKInputs

PAIRINGS = ("rank-pair", "shared-argmax-op")


class NodeChoices:
    """Per computed node: op logits over the non-zero ops, input logits over source nodes."""

    def __init__(self, cell: CellTopology, *, pairing: str = "rank-pair") -> None:
        if not isinstance(cell.rule, TopKInputs):
            raise CapabilityError(f"cell '{cell.name}' does not keep top-k inputs per node")
        if pairing not in PAIRINGS:
            raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")
        self.cell = cell
        self.k = cell.rule.k
        self.pairing = pairing
        self.cell_ops = cell.ops.nonzero
        self.nodes = cell.computed
        self.sources = tuple(cell.sources_of(n) for n in self.nodes)
        n_in = max(s for s, _ in cell.edges) + 1  # input logits are indexed by source node
        if self.k > len(self.cell_ops) or any(len(srcs) < self.k for srcs in self.sources):
            raise CapabilityError(
                f"NASI keeps {self.k} ops and {self.k} distinct inputs per node; cell '{cell.name}' "
                f"has {len(self.cell_ops)} ops and nodes with {min(len(s) for s in self.sources)} inputs"
            )
        self.shapes: tuple[tuple[int, int], ...] = (
            (len(self.nodes), len(self.cell_ops)),
            (len(self.nodes), n_in),
        )
        self._input_mask = torch.tensor([[k in srcs for k in range(n_in)] for srcs in self.sources])
        self._zero_col = None if cell.ops.zero is None else cell.ops.column(cell.ops.zero)
        order = [cell.row(s, node) for node, srcs in zip(self.nodes, self.sources, strict=True) for s in srcs]
        #: Where each row of the node-by-node blocks belongs (None: already in row order).
        self._rows = None if order == list(range(len(order))) else torch.tensor(order).argsort()

    def masks(self) -> tuple[torch.Tensor | None, ...]:
        return (None, self._input_mask)

    def edge_weights(self, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        """The cell's (edges x ops) supernet weights from its op and input samples."""
        w_op, w_in = samples
        blocks = [w_in[i, list(srcs), None] * w_op[i, None, :] for i, srcs in enumerate(self.sources)]
        w = torch.cat(blocks, dim=0)
        if self._rows is not None:
            w = w[self._rows]
        if self._zero_col is None:
            return w
        zero = w.new_zeros(w.shape[0], 1)
        return torch.cat([w[:, : self._zero_col], zero, w[:, self._zero_col :]], dim=1)

    def kept(self, logits: Sequence[torch.Tensor]) -> tuple[KeptEdge, ...]:
        ops, ins = (a.detach().cpu() for a in logits)
        out: list[KeptEdge] = []
        for i, (node, srcs) in enumerate(zip(self.nodes, self.sources, strict=True)):
            top_ops = _top(ops[i], self.k)
            top_ins = [srcs[j] for j in _top(ins[i, list(srcs)], self.k)]
            if self.pairing == "shared-argmax-op":
                top_ops = [top_ops[0]] * self.k
            out.extend(KeptEdge(self.cell_ops[o], src, node) for o, src in zip(top_ops, top_ins, strict=True))
        return tuple(out)


def _top(row: torch.Tensor, k: int) -> list[int]:
    """Indices of the k largest entries, ties broken by the lower index (stable)."""
    order = sorted(range(row.numel()), key=lambda j: (-float(row[j]), j))
    return order[:k]

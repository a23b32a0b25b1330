"""NASI's categorical choices for a cell that keeps one op per edge (NAS-Bench-201's rule).

One categorical over the cell's ops per edge (alpha in R^{E x |ops|}, notes §5.2): a
straight-through sample is directly the supernet's edge weights, and the derived cell is
each edge's arg-max.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nasforge.kernel.supernet_topology import CellTopology, KeptEdge


class EdgeChoices:
    """One categorical per row of the cell's architecture tensor."""

    def __init__(self, cell: CellTopology) -> None:
        self.cell = cell
        self.shapes: tuple[tuple[int, int], ...] = (cell.shape,)

    def masks(self) -> tuple[torch.Tensor | None, ...]:
        return (None,)

    def edge_weights(self, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        (w,) = samples
        return w

    def kept(self, logits: Sequence[torch.Tensor]) -> tuple[KeptEdge, ...]:
        (alpha,) = logits
        index = alpha.detach().argmax(dim=-1).tolist()
        return tuple(
            KeptEdge(self.cell.op_names[k], src, dst)
            for k, (src, dst) in zip(index, self.cell.edges, strict=True)
        )

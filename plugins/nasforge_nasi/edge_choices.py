"""NASI's categorical choices for a cell that keeps one op per edge (NAS-Bench-201's rule).

One categorical over the cell's ops per edge (alpha in R^{E x |ops|}): a
straight-through sample is directly the supernet's edge weights, and the derived cell is
each edge's arg-max, through the core's derivation (which repairs a cell whose output no
input reaches, with a warning). A sampled cell is reported as sampled, unrepaired.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nasforge.kernel.supernet_discretise import discretise
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
        """The derived cell: each edge's arg-max under the cell's rule (repaired if cut off)."""
        (alpha,) = logits
        return discretise(self.cell, alpha.detach())

    def sampled(self, samples: Sequence[torch.Tensor]) -> tuple[KeptEdge, ...]:
        """The cell a one-hot sample runs, as it is (a sample is not a derivation)."""
        (alpha,) = samples
        index = alpha.detach().argmax(dim=-1).tolist()
        return tuple(
            KeptEdge(self.cell.op_names[k], src, dst)
            for k, (src, dst) in zip(index, self.cell.edges, strict=True)
        )

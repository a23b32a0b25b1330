"""NASI's categorical relaxation of any supernet that follows the core's supernet contract.

Each cell type's discretisation rule (data on its topology) decides the decisions NASI
samples: a cell that keeps one op per edge gets one categorical per edge
(:class:`EdgeChoices`), a cell whose nodes keep their top-k inputs gets per-node op and
input categoricals (:class:`NodeChoices`). Samples become the supernet's edge weights,
final logits a genotype through ``supernet.genotype_of``; no space is named anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import Supernet
from nasforge.kernel.supernet_topology import CellTopology, OneOpPerEdge
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.edge_choices import EdgeChoices
from nasforge_nasi.node_choices import NodeChoices
from nasforge_nasi.relaxation import Relaxation


def cell_choices(cell: CellTopology, *, pairing: str) -> EdgeChoices | NodeChoices:
    """The decisions NASI samples for one cell type, by its rule."""
    if isinstance(cell.rule, OneOpPerEdge):
        return EdgeChoices(cell)
    return NodeChoices(cell, pairing=pairing)


class SupernetRelaxation(Relaxation):
    """The cells' choices, concatenated in the supernet's architecture-tensor order.

    ``single_path=True`` runs only the sampled ops (GDAS-style, ``sparse=True``); by
    default every op runs while the samples carry gradients, so the straight-through
    gradient reaches every logit.
    """

    def __init__(self, supernet: Supernet, *, single_path: bool = False, pairing: str = "rank-pair") -> None:
        self.supernet = supernet
        self.parts = tuple(cell_choices(cell, pairing=pairing) for cell in supernet.topology)
        self.shapes = tuple(shape for part in self.parts for shape in part.shapes)
        self.single_path = single_path

    def masks(self) -> tuple[torch.Tensor | None, ...]:
        return tuple(m for part in self.parts for m in part.masks())

    def _split(self, tensors: Sequence[torch.Tensor]) -> list[Sequence[torch.Tensor]]:
        out, start = [], 0
        for part in self.parts:
            out.append(tensors[start : start + len(part.shapes)])
            start += len(part.shapes)
        return out

    def forward(self, supernet: nn.Module, x: torch.Tensor, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        weights = [part.edge_weights(s) for part, s in zip(self.parts, self._split(samples), strict=True)]
        return supernet(x, weights, sparse=self.single_path)

    def derive(self, alphas: Sequence[torch.Tensor]) -> Genotype:
        kept = [part.kept(a) for part, a in zip(self.parts, self._split(alphas), strict=True)]
        return self.supernet.genotype_of(kept)

    def sampled_genotype(self, samples: Sequence[torch.Tensor]) -> Genotype:
        """The sampled cells as they ran (a cut-off sample stays cut off in the journal)."""
        kept = [
            part.sampled(s) if isinstance(part, EdgeChoices) else part.kept(s)
            for part, s in zip(self.parts, self._split([s.detach() for s in samples]), strict=True)
        ]
        return self.supernet.genotype_of(kept)


def relaxation_for(supernet: Supernet, config: NasiConfig) -> SupernetRelaxation:
    """NASI's relaxation of ``supernet`` under ``config`` (single path, pairing)."""
    return SupernetRelaxation(supernet, single_path=config.single_path, pairing=config.pairing)

"""A contract supernet as DARTS and PR-DARTS use it: their forward, derivation and statistics.

Everything here goes through the core's supernet contract (:mod:`nasforge.kernel.supernet`):
the architecture tensors and their cell topologies, the forward with explicit edge
weights, the rule-driven derivation and the one-hot weights of a genotype. Nothing is
specific to a space, so the strategies search any space whose ``supernet()`` follows the
contract (NAS-Bench-201, DARTS, or a third party's).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import Supernet
from nasforge.kernel.supernet_topology import CellTopology
from nasforge_darts.cell_stats import CellStats, cell_stats


class SupernetView:
    """A supernet plus how one bilevel method derives from it.

    ``exclude_zero`` never derives a cell's zero op (PR-DARTS derives "the top two
    operations" and never ``none``; DARTS on
    NAS-Bench-201 conventionally keeps it in the arg-max). ``distinct_sources`` overrides
    a keep-top-k rule's own setting (PR-DARTS's official code lets a node read one source
    twice); None keeps the space's rule.
    """

    def __init__(
        self, module: Supernet, *, exclude_zero: bool = False, distinct_sources: bool | None = None
    ) -> None:
        self.module = module
        self.cells: tuple[CellTopology, ...] = tuple(module.topology)
        self.exclude_zero = exclude_zero
        self.distinct_sources = distinct_sources

    @property
    def nn_module(self) -> nn.Module:
        return self.module  # type: ignore[return-value]

    @property
    def cell_types(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.cells)

    def arch_parameters(self) -> list[nn.Parameter]:
        return list(self.module.arch_parameters())

    def weight_parameters(self) -> list[nn.Parameter]:
        return list(self.module.weight_parameters())

    def forward(self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None) -> torch.Tensor:
        """Logits under explicit edge weights (one tensor per cell type); None = default.

        Zero-weight ops are skipped (sparse gates save their cost; a zero softmax weight
        has no gradient to lose).
        """
        if weights is None:
            return self.nn_module(x)
        return self.nn_module(x, list(weights), sparse=True)

    def derive(self, scores: Sequence[torch.Tensor]) -> Genotype:
        """The discrete genotype these per-(edge, op) strengths select."""
        exclude = {c.ops.zero for c in self.cells if c.ops.zero is not None} if self.exclude_zero else set()
        return self.module.derive(list(scores), exclude=exclude, distinct_sources=self.distinct_sources)

    def one_hot(self, g: Genotype) -> list[torch.Tensor]:
        """Edge weights that run exactly the cell(s) of ``g`` (weight inheritance)."""
        return [w.detach() for w in self.module.one_hot_weights(g)]

    def stats(self, g: Genotype) -> dict[str, CellStats]:
        """Skip counts and depths of each cell type of ``g``."""
        kept = self.module.kept_edges(g)
        return {
            cell.name: cell_stats(edges, inputs=cell.inputs, ops=cell.ops)
            for cell, edges in zip(self.cells, kept, strict=True)
        }

"""One interface over the supernets DARTS and PR-DARTS search: the DARTS cell and NB201.

The strategies need the same few facts from any supernet: its architecture tensors, the
op names of their columns, which rows form the input-to-output chain (PR-DARTS's path
term), how to run it with explicit edge weights and how to read a genotype off scores.
A view supplies them without the strategy importing any space's plugin by name: the
NAS-Bench-201 supernet is reached only through the module ``space.supernet()`` returns.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from nasforge.errors import CapabilityError
from nasforge.genotype import Genotype
from nasforge.search_space import SearchSpace
from nasforge_darts.cell_genotype import CellGenotype
from nasforge_darts.cell_stats import CellStats, cell_stats
from nasforge_darts.discretise import derive_cell
from nasforge_darts.primitives import (
    CELL_TYPES,
    EDGES_PER_NODE,
    INPUTS,
    PRIMITIVES,
    STEPS,
    edge_index,
    edge_list,
)
from nasforge_darts.search_network import SearchNetwork

#: NAS-Bench-201's edges as (source, target), in the benchmark string's (and alpha) order.
NB201_EDGES: tuple[tuple[int, int], ...] = ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3))


class SupernetView(abc.ABC):
    """What a bilevel strategy needs from a supernet, independent of its space."""

    module: nn.Module
    space: SearchSpace
    op_names: tuple[str, ...]
    cell_types: tuple[str, ...]
    #: (source, target) node of every row of an architecture tensor.
    edges: tuple[tuple[int, int], ...]
    #: Rows of the chain input -> node -> ... -> last node (PR-DARTS path regulariser).
    chain: tuple[int, ...]

    def arch_parameters(self) -> list[nn.Parameter]:
        return list(self.module.arch_parameters())

    def weight_parameters(self) -> list[nn.Parameter]:
        return list(self.module.weight_parameters())

    @abc.abstractmethod
    def forward(self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None) -> torch.Tensor:
        """Logits under explicit edge weights (one tensor per cell type); None = default."""

    @abc.abstractmethod
    def derive(self, scores: Sequence[torch.Tensor]) -> Genotype:
        """The discrete genotype these per-(edge, op) strengths select."""

    @abc.abstractmethod
    def one_hot(self, g: Genotype) -> list[torch.Tensor]:
        """Edge weights that run exactly the cell(s) of ``g`` (weight inheritance)."""

    @abc.abstractmethod
    def stats(self, g: Genotype) -> dict[str, CellStats]:
        """Skip counts and depths of each cell type of ``g``."""

    @property
    def num_nodes(self) -> int:
        """Nodes ``h`` of the cell as the paper counts them (for its zeta = 2/(h(h-1)))."""
        return max(t for _, t in self.edges) + 1

    def column(self, op: str) -> int:
        return self.op_names.index(op)

    def columns(self, predicate: Callable[[str], bool]) -> list[int]:
        return [i for i, name in enumerate(self.op_names) if predicate(name)]


class DartsCellView(SupernetView):
    """The DARTS search network: two cell types, 14 edges, top-2 discretisation."""

    def __init__(
        self,
        space: SearchSpace,
        module: SearchNetwork,
        *,
        distinct_sources: bool = True,
        exclude_none: bool = True,
    ) -> None:
        """``exclude_none`` is accepted for symmetry: a derived DARTS cell never keeps 'none'."""
        self.space, self.module = space, module
        self.op_names = PRIMITIVES
        self.cell_types = CELL_TYPES
        self.edges = edge_list()
        self.chain = tuple(edge_index(n, n + 1) for n in range(1, 5))  # 1->2->3->4->5
        self.distinct_sources = distinct_sources

    def forward(self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None) -> torch.Tensor:
        return self.module(x, weights)

    @property
    def num_nodes(self) -> int:
        return INPUTS + STEPS + 1  # two inputs, four intermediate nodes, the concat output

    def one_hot(self, g: Genotype) -> list[torch.Tensor]:
        cells = CellGenotype.from_choices(g.choices)
        like = self.module.alphas_normal
        out = []
        for kind in self.cell_types:
            w = torch.zeros_like(like, requires_grad=False)
            for k, (op, src) in enumerate(cells.cell(kind)):
                w[edge_index(src, INPUTS + k // EDGES_PER_NODE), self.column(op)] += 1.0
            out.append(w.detach())
        return out

    def stats(self, g: Genotype) -> dict[str, CellStats]:
        cells = CellGenotype.from_choices(g.choices)
        return {
            kind: cell_stats(
                ((op, src, INPUTS + k // EDGES_PER_NODE) for k, (op, src) in enumerate(cells.cell(kind))),
                inputs=range(INPUTS),
            )
            for kind in self.cell_types
        }

    def derive(self, scores: Sequence[torch.Tensor]) -> Genotype:
        normal, reduce = (
            derive_cell(s, self.op_names, distinct_sources=self.distinct_sources) for s in scores
        )
        return self.space.genotype(CellGenotype(normal=normal, reduce=reduce).to_choices())


class ArgmaxCellView(SupernetView):
    """A single shared cell where every edge keeps exactly one op (NAS-Bench-201).

    The supernet must offer ``arch_parameters()`` (one tensor), ``weight_parameters()``,
    ``forward(x, weights, sparse=...)`` and ``genotype(weights)`` (the arg-max cell).
    """

    def __init__(
        self,
        space: SearchSpace,
        module: nn.Module,
        *,
        edges: tuple[tuple[int, int], ...],
        op_names: tuple[str, ...],
        exclude_none: bool = False,
        distinct_sources: bool = True,
    ) -> None:
        """``exclude_none``: never derive the zero op (PR-DARTS, research note A20); DARTS on
        NB201 conventionally keeps it in the arg-max. ``distinct_sources`` has no meaning
        here (one op per edge) and is accepted for symmetry."""
        self.space, self.module = space, module
        self.exclude_none = exclude_none
        self.op_names = op_names
        self.cell_types = ("cell",)
        self.edges = edges
        self.chain = _chain_rows(edges)

    def forward(self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None) -> torch.Tensor:
        if weights is None:
            return self.module(x)
        (w,) = weights
        return self.module(x, w, sparse=True)

    def one_hot(self, g: Genotype) -> list[torch.Tensor]:
        return [self.module.one_hot(g).detach()]

    def stats(self, g: Genotype) -> dict[str, CellStats]:
        triples = ((op, s, t) for op, (s, t) in zip(g.choices, self.edges, strict=True))
        return {"cell": cell_stats(triples, inputs=(0,))}

    def derive(self, scores: Sequence[torch.Tensor]) -> Genotype:
        (s,) = scores
        s = s.detach().clone()
        if self.exclude_none and "none" in self.op_names:
            s[:, self.column("none")] = float("-inf")
        return self.module.genotype(s)


def _chain_rows(edges: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Rows of the edges n -> n+1, starting at the first node that has one."""
    lookup = {e: i for i, e in enumerate(edges)}
    start = min(s for s, _ in edges)
    rows = []
    node = start
    while (node, node + 1) in lookup:
        rows.append(lookup[(node, node + 1)])
        node += 1
    return tuple(rows)


def view_for(space: SearchSpace, module: nn.Module, **options: Any) -> SupernetView:
    """The view of ``space``'s supernet; refuses supernets it does not know how to read."""
    if isinstance(module, SearchNetwork):
        return DartsCellView(space, module, **options)
    if space.name == "nb201":
        n_arch = len(list(module.arch_parameters()))
        if n_arch != 1 or not hasattr(module, "genotype"):
            raise CapabilityError("the nb201 supernet must have one alpha tensor and genotype()")
        return ArgmaxCellView(space, module, edges=NB201_EDGES, op_names=tuple(space.op_names), **options)
    raise CapabilityError(
        f"DARTS-family strategies know the 'darts' and 'nb201' supernets, not '{space.name}'"
    )

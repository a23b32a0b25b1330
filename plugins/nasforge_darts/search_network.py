"""The DARTS supernet: every edge carries all eight ops, mixed by explicit edge weights.

The architecture parameters are ordinary ``nn.Parameter`` s (``alphas_normal``,
``alphas_reduce``, shape 14 x 8, columns in :data:`PRIMITIVES` order), so they move with
``.to(device)`` and live in ``state_dict``; :meth:`arch_parameters` and
:meth:`weight_parameters` split them for the two optimisers of bilevel search.

``forward(x, weights, sparse=...)`` takes the per-edge op weights from outside: DARTS feeds
softmax(alpha), PR-DARTS feeds sampled stochastic gates, NASI Gumbel samples. An op whose
weight is exactly zero is not computed at all (that is where sparse gates save time)
when ``sparse`` is set or the weights need no gradient; otherwise every op runs, so a
straight-through gradient reaches the ops a sample switched off. The zero op never runs
(its output, and so its gradient, is always zero).

It follows the core's supernet contract (:mod:`nasforge.kernel.supernet`) with the two cells of
:data:`~nasforge_darts.cell_topology.TOPOLOGY`.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import torch
from attrs import validators as v
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import KeptCells, SupernetMixin
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge
from nasforge_darts.cell_genotype import CellGenotype
from nasforge_darts.cell_topology import TOPOLOGY
from nasforge_darts.ops import FactorizedReduce, ReLUConvBN, make_op
from nasforge_darts.primitives import (
    CELL_TYPES,
    CONCAT,
    EDGES_PER_NODE,
    INPUTS,
    NONE,
    NUM_EDGES,
    PRIMITIVES,
    STEPS,
    edge_list,
)


@attrs.frozen
class SupernetConfig:
    """Supernet shape; defaults are the DARTS search network (8 cells, C = 16)."""

    C: int = attrs.field(default=16, validator=[v.instance_of(int), v.ge(2)])
    layers: int = attrs.field(default=8, validator=[v.instance_of(int), v.ge(3)])
    num_classes: int = attrs.field(default=10, validator=[v.instance_of(int), v.ge(1)])
    in_channels: int = attrs.field(default=3, validator=[v.instance_of(int), v.ge(1)])
    stem_multiplier: int = attrs.field(default=3, validator=[v.instance_of(int), v.ge(1)])
    arch_init_std: float = attrs.field(default=1e-3, converter=float, validator=v.ge(0.0))

    @C.validator
    def _even(self, _attr: attrs.Attribute, value: int) -> None:
        if value % 2:
            raise ValueError(f"C must be even (FactorizedReduce halves it), got {value}")

    @property
    def reduction_cells(self) -> tuple[int, int]:
        return (self.layers // 3, 2 * self.layers // 3)


class MixedOp(nn.Module):
    """All candidate ops of one edge; the output is their weighted sum."""

    def __init__(self, channels: int, stride: int) -> None:
        super().__init__()
        ops = []
        for name in PRIMITIVES:
            op = make_op(name, channels, stride, affine=False)
            if "pool" in name:  # as DARTS: give pools a (non-affine) BN like the convs have
                op = nn.Sequential(op, nn.BatchNorm2d(channels, affine=False))
            ops.append(op)
        self.ops = nn.ModuleList(ops)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, active: Sequence[int]) -> torch.Tensor | None:
        out = None
        for i in active:
            y = weights[i] * self.ops[i](x)
            out = y if out is None else out + y
        return out


class SearchCell(nn.Module):
    """A cell whose 14 edges are :class:`MixedOp` s; output = concat of nodes 2..5."""

    def __init__(
        self, c_prev_prev: int, c_prev: int, channels: int, *, reduction: bool, reduction_prev: bool
    ) -> None:
        super().__init__()
        self.reduction = reduction
        self.preprocess0: nn.Module = (
            FactorizedReduce(c_prev_prev, channels, affine=False)
            if reduction_prev
            else ReLUConvBN(c_prev_prev, channels, 1, 1, 0, affine=False)
        )
        self.preprocess1 = ReLUConvBN(c_prev, channels, 1, 1, 0, affine=False)
        self.edges = nn.ModuleList(
            MixedOp(channels, 2 if reduction and src < INPUTS else 1) for src, _ in edge_list()
        )
        self.multiplier = len(CONCAT)

    def forward(
        self,
        s0: torch.Tensor,
        s1: torch.Tensor,
        weights: torch.Tensor,
        active: Sequence[Sequence[int]],
    ) -> torch.Tensor:
        states = [self.preprocess0(s0), self.preprocess1(s1)]
        e = 0
        for _ in range(STEPS):
            total = None
            for h in list(states):
                y = self.edges[e](h, weights[e], active[e])
                e += 1
                if y is not None:
                    total = y if total is None else total + y
            if total is None:  # every incoming op gated off: the node is zero
                template = states[0][:, :, ::2, ::2] if self.reduction else states[0]
                total = torch.zeros_like(template)
            states.append(total)
        return torch.cat([states[i] for i in CONCAT], dim=1)


class SearchNetwork(SupernetMixin, nn.Module):
    """Stem, ``layers`` search cells (reductions at floor(L/3), floor(2L/3)), classifier."""

    topology: tuple[CellTopology, ...] = TOPOLOGY

    def __init__(self, config: SupernetConfig | None = None, **options: object) -> None:
        super().__init__()
        cfg = config if config is not None else SupernetConfig(**options)  # type: ignore[arg-type]
        self.cfg = cfg
        width = cfg.stem_multiplier * cfg.C
        self.stem = nn.Sequential(
            nn.Conv2d(cfg.in_channels, width, 3, padding=1, bias=False), nn.BatchNorm2d(width)
        )
        c_pp, c_p, channels = width, width, cfg.C
        self.cells = nn.ModuleList()
        reduction_prev = False
        for i in range(cfg.layers):
            reduction = i in cfg.reduction_cells
            if reduction:
                channels *= 2
            cell = SearchCell(c_pp, c_p, channels, reduction=reduction, reduction_prev=reduction_prev)
            self.cells.append(cell)
            reduction_prev = reduction
            c_pp, c_p = c_p, cell.multiplier * channels
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c_p, cfg.num_classes)
        shape = (NUM_EDGES, len(PRIMITIVES))
        self.alphas_normal = nn.Parameter(cfg.arch_init_std * torch.randn(shape))
        self.alphas_reduce = nn.Parameter(cfg.arch_init_std * torch.randn(shape))

    # --- parameter groups -----------------------------------------------------------
    def arch_parameters(self) -> list[nn.Parameter]:
        """[alphas_normal, alphas_reduce], in :data:`CELL_TYPES` order."""
        return [self.alphas_normal, self.alphas_reduce]

    def weight_parameters(self) -> list[nn.Parameter]:
        arch = {id(p) for p in self.arch_parameters()}
        return [p for p in self.parameters() if id(p) not in arch]

    @property
    def op_names(self) -> tuple[str, ...]:
        return PRIMITIVES

    @property
    def cell_types(self) -> tuple[str, ...]:
        return CELL_TYPES

    def edge_weights(self) -> list[torch.Tensor]:
        """DARTS's relaxation: a softmax over the ops of each edge."""
        return [torch.softmax(a, dim=-1) for a in self.arch_parameters()]

    # --- forward --------------------------------------------------------------------
    def forward(
        self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        """Logits; ``weights`` = (normal, reduce) edge weights, default softmax(alphas).

        Zero-weight ops are skipped when ``sparse`` or when the weights need no gradient.
        """
        w_normal, w_reduce = self.edge_weights() if weights is None else weights
        for w in (w_normal, w_reduce):
            if w.shape != self.alphas_normal.shape:
                raise ValueError(
                    f"edge weights must have shape {tuple(self.alphas_normal.shape)}, got {tuple(w.shape)}"
                )
        active_normal = _active_ops(w_normal, skip_zero=sparse or not w_normal.requires_grad)
        active_reduce = _active_ops(w_reduce, skip_zero=sparse or not w_reduce.requires_grad)
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            if cell.reduction:
                out = cell(s0, s1, w_reduce, active_reduce)
            else:
                out = cell(s0, s1, w_normal, active_normal)
            s0, s1 = s1, out
        return self.classifier(self.global_pool(s1).flatten(1))

    # --- the contract's discrete views ------------------------------------------------
    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        """Per cell type, the (op, source, node) edges of ``g``; node ``2 + i`` reads edges 2i, 2i+1."""
        cells = CellGenotype.from_choices(g.choices)
        return tuple(
            tuple(
                KeptEdge(op, src, INPUTS + k // EDGES_PER_NODE)
                for k, (op, src) in enumerate(cells.cell(kind))
            )
            for kind in CELL_TYPES
        )

    def genotype_of(self, kept: KeptCells) -> Genotype:
        """The DARTS genotype keeping ``kept``: each node's edges in the order given."""
        from nasforge_darts.space import DartsSpace  # the space module builds this one lazily

        cells = []
        for cell, edges in zip(self.topology, kept, strict=True):
            cell.check_kept(edges)
            ordered = sorted(edges, key=lambda e: e.target)  # stable: keeps each node's rank order
            cells.append([(e.op, e.source) for e in ordered])
        return DartsSpace().from_cells(CellGenotype(normal=cells[0], reduce=cells[1]))


_NONE_COLUMN = PRIMITIVES.index(NONE)


def _active_ops(weights: torch.Tensor, *, skip_zero: bool) -> list[list[int]]:
    """Per edge, the columns worth computing: never the zero op, and with ``skip_zero``
    only those of non-zero weight."""
    if not skip_zero:
        every = [i for i in range(weights.shape[1]) if i != _NONE_COLUMN]
        return [every] * weights.shape[0]
    nonzero = (weights.detach() != 0).tolist()
    return [[i for i, on in enumerate(row) if on and i != _NONE_COLUMN] for row in nonzero]

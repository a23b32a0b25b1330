"""The hello supernet: every edge holds all three ops, mixed by edge weights given from outside.

It implements the core's supernet contract and nothing more, and that is all DARTS,
PR-DARTS and NASI need: ``topology`` (the cell), ``arch_parameters`` / ``weight_parameters``,
``forward(x, weights, sparse=...)``, and the genotype <-> kept-edges pair; ``derive`` and
``one_hot_weights`` come with :class:`nasforge.SupernetMixin`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge import CellTopology, Genotype, KeptEdge, SupernetMixin
from nasforge_hello.cell_network import Skeleton
from nasforge_hello.cell_ops import make_op
from nasforge_hello.cell_topology import TOPOLOGY

Active = Sequence[Sequence[int]]


class MixedEdge(nn.Module):
    """All candidate ops of one edge; the output is their weighted sum over ``active`` ops."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.ops = nn.ModuleList(make_op(name, channels, affine=False) for name in TOPOLOGY.op_names)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, active: Sequence[int]) -> torch.Tensor | None:
        out = None
        for k in active:
            term = weights[k] * self.ops[k](x)
            out = term if out is None else out + term
        return out


class MixedCell(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.edges = nn.ModuleList(MixedEdge(channels) for _ in TOPOLOGY.edges)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, active: Active) -> torch.Tensor:
        nodes = {0: x}
        for node in TOPOLOGY.computed:
            total = None
            for row, (src, dst) in enumerate(TOPOLOGY.edges):
                if dst == node:
                    term = self.edges[row](nodes[src], weights[row], active[row])
                    if term is not None:
                        total = term if total is None else total + term
            nodes[node] = torch.zeros_like(x) if total is None else total  # every op off: zero
        return torch.stack([nodes[n] for n in TOPOLOGY.output]).sum(0)


class HelloSupernet(SupernetMixin, Skeleton):
    """The weight-sharing network; ``alpha`` (6 edges x 3 ops) is its architecture tensor."""

    topology: tuple[CellTopology, ...] = (TOPOLOGY,)

    def __init__(self, *, C: int = 4, cells: int = 1, num_classes: int = 10, in_channels: int = 3) -> None:
        super().__init__(
            lambda: MixedCell(C), C=C, cells=cells, num_classes=num_classes, in_channels=in_channels
        )
        self.alpha = nn.Parameter(1e-3 * torch.randn(TOPOLOGY.shape))

    def arch_parameters(self) -> list[nn.Parameter]:
        return [self.alpha]

    def weight_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if name != "alpha"]

    def forward(
        self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        (w,) = [torch.softmax(self.alpha, dim=-1)] if weights is None else weights
        if tuple(w.shape) != TOPOLOGY.shape:
            raise ValueError(f"edge weights must have shape {TOPOLOGY.shape}, got {tuple(w.shape)}")
        if sparse or not w.requires_grad:  # zero-weight ops cannot matter: skip them
            active: Active = [[k for k, on in enumerate(row) if on] for row in w.detach().ne(0).tolist()]
        else:  # a straight-through gradient must reach ops weighted zero
            active = [range(len(TOPOLOGY.op_names))] * len(TOPOLOGY.edges)
        return self.run(x, lambda cell, h: cell(h, w, active))

    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        from nasforge_hello.cell_space import HelloCellSpace

        HelloCellSpace().validate(g)
        choices = g.choices
        return (
            tuple(
                KeptEdge(str(choices[2 * i]), int(choices[2 * i + 1]), node)
                for i, node in enumerate(TOPOLOGY.computed)
            ),
        )

    def genotype_of(self, kept: Sequence[Sequence[KeptEdge]]) -> Genotype:
        from nasforge_hello.cell_space import HelloCellSpace

        (cell,) = kept
        TOPOLOGY.check_kept(cell)
        choices: list[str | int] = []
        for e in sorted(cell, key=lambda e: e.target):
            choices += [e.op, e.source]
        return HelloCellSpace().genotype(choices)

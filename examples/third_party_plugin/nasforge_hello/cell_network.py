"""The stand-alone network of a hello genotype: stem, ``cells`` cells, pooled classifier.

The supernet uses the same skeleton with mixed cells, so a searched cell trains in the
network it was searched in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from nasforge import KeptEdge
from nasforge_hello.cell_ops import make_op


class Skeleton(nn.Module):
    """Stem conv + BN, then ``cells`` cells of width ``C``, then average pool and linear."""

    def __init__(
        self, make_cell: Callable[[], nn.Module], *, C: int, cells: int, num_classes: int, in_channels: int
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, C, 3, padding=1, bias=False), nn.BatchNorm2d(C))
        self.cells = nn.ModuleList(make_cell() for _ in range(cells))
        self.classifier = nn.Linear(C, num_classes)

    def run(
        self, x: torch.Tensor, run_cell: Callable[[nn.Module, torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        h = self.stem(x)
        for cell in self.cells:
            h = run_cell(cell, h)
        logits: torch.Tensor = self.classifier(h.mean(dim=(2, 3)))
        return logits


class Cell(nn.Module):
    """A discrete hello cell: node ``t`` applies its kept op to its kept source."""

    def __init__(self, kept: Sequence[KeptEdge], channels: int) -> None:
        super().__init__()
        self.kept = tuple(kept)
        self.ops = nn.ModuleList(make_op(e.op, channels) for e in self.kept)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = {0: x}
        for e, op in sorted(zip(self.kept, self.ops, strict=True), key=lambda pair: pair[0].target):
            nodes[e.target] = op(nodes[e.source])
        return torch.stack([nodes[e.target] for e in self.kept]).sum(0)


class CellNetwork(Skeleton):
    def __init__(
        self,
        kept: Sequence[KeptEdge],
        *,
        C: int = 4,
        cells: int = 1,
        num_classes: int = 10,
        in_channels: int = 3,
    ) -> None:
        super().__init__(
            lambda: Cell(kept, C), C=C, cells=cells, num_classes=num_classes, in_channels=in_channels
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x, lambda cell, h: cell(h))

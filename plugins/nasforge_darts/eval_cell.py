"""One discrete cell of the evaluation network, built from (op, input) pairs."""

from __future__ import annotations

import torch
from torch import nn

from nasforge_darts.cell_genotype import Edge
from nasforge_darts.drop_path import drop_path
from nasforge_darts.ops import FactorizedReduce, Identity, ReLUConvBN, make_op
from nasforge_darts.primitives import CONCAT, EDGES_PER_NODE, INPUTS


class EvalCell(nn.Module):
    """Nodes 2.. each sum two ops on earlier nodes (two edges a node, so ``len(edges) // 2``
    nodes: 4 in a DARTS cell, 5 in a NASNet-space one); the cell outputs the concatenation
    of the ``concat`` nodes (every intermediate node in DARTS, the loose ends in NASNet).

    Reduction cells run stride 2 on edges that leave the input nodes. When the previous
    cell reduced, input 0 is one resolution larger and is brought down by FactorizedReduce.
    """

    def __init__(
        self,
        edges: tuple[Edge, ...],
        c_prev_prev: int,
        c_prev: int,
        channels: int,
        *,
        reduction: bool,
        reduction_prev: bool,
        concat: tuple[int, ...] = CONCAT,
    ) -> None:
        super().__init__()
        self.reduction = reduction
        self.preprocess0: nn.Module = (
            FactorizedReduce(c_prev_prev, channels)
            if reduction_prev
            else ReLUConvBN(c_prev_prev, channels, 1, 1, 0)
        )
        self.preprocess1 = ReLUConvBN(c_prev, channels, 1, 1, 0)
        self.sources = tuple(src for _, src in edges)
        self.ops = nn.ModuleList(
            make_op(op, channels, 2 if reduction and src < INPUTS else 1) for op, src in edges
        )
        self.concat = tuple(concat)
        self.multiplier = len(self.concat)

    def forward(self, s0: torch.Tensor, s1: torch.Tensor, drop_prob: float = 0.0) -> torch.Tensor:
        states = [self.preprocess0(s0), self.preprocess1(s1)]
        for node in range(len(self.ops) // EDGES_PER_NODE):
            total = None
            for k in range(EDGES_PER_NODE * node, EDGES_PER_NODE * (node + 1)):
                op = self.ops[k]
                h = op(states[self.sources[k]])
                if self.training and drop_prob > 0.0 and not isinstance(op, Identity):
                    h = drop_path(h, drop_prob)
                total = h if total is None else total + h
            states.append(total)
        return torch.cat([states[i] for i in self.concat], dim=1)

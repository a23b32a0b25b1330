"""NASI's relaxation of the DARTS cell space (paper App. B.2), on the DARTS supernet.

NASI samples, per intermediate node i of each cell type, one op o_i from the seven
non-zero ops and one input x_k, k < i, independently (42 logits per cell type; the zero
op is dropped because a derived cell can never hold it). The shared DARTS supernet has
one mixed op per (input, node) edge, so a sample is written as edge weights
w[(k, i), o] = w^x_{i,k} · w^o_{i,o}: with hard one-hot rows that runs exactly op o_i on
input x_k, as NASI's node does. The straight-through gradients are those of this product
relaxation, which differs from NASI's op(Σ_k w_k x_k) only in how a non-selected input
is linearised; both are unbiased for the forward pass and both reach every logit.

The supernet skips ops whose weight is exactly zero; a 1e-30 floor keeps every op in the
graph (so the straight-through gradient reaches them) while changing no output at float
precision. ``single_path=True`` drops the floor: only sampled ops run (GDAS-style).

Reduction cells use the DARTS supernet's stride-2 reduction (the "standard DARTS" reading
of A11), and the derived cell keeps the top-2 ops and top-2 inputs of each node, paired
by rank (A12; ``pairing="shared-argmax-op"`` gives both inputs the arg-max op).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge.errors import CapabilityError
from nasforge.genotype import Genotype
from nasforge.search_space import SearchSpace
from nasforge_nasi.relaxation import Relaxation

NONE_OP = "none"
INPUTS = 2
STEPS = 4
KEEP = 2
FLOOR = 1e-30


class DartsRelaxation(Relaxation):
    """Per cell type: op logits (4 x 7) and input logits (4 x 5, masked to k < 2 + i)."""

    def __init__(
        self,
        space: SearchSpace,
        supernet: nn.Module,
        *,
        single_path: bool = False,
        pairing: str = "rank-pair",
    ) -> None:
        self.space = space
        self.op_names = tuple(space.op_names)
        if NONE_OP not in self.op_names:
            raise CapabilityError("NASI's DARTS relaxation expects the supernet's 'none' column")
        self.cell_ops = tuple(o for o in self.op_names if o != NONE_OP)
        self.edges = tuple((s, INPUTS + i) for i in range(STEPS) for s in range(INPUTS + i))
        params = list(supernet.arch_parameters())  # type: ignore[operator]
        expected = (len(self.edges), len(self.op_names))
        if len(params) != 2 or any(tuple(p.shape) != expected for p in params):
            raise CapabilityError(
                f"NASI's DARTS relaxation needs (normal, reduce) alphas of shape {expected}, "
                f"got {[tuple(p.shape) for p in params]}"
            )
        n_in = INPUTS + STEPS - 1
        self.shapes = ((STEPS, len(self.cell_ops)), (STEPS, n_in)) * 2
        self.single_path = single_path
        self.pairing = pairing
        self._input_mask = torch.tensor([[k < INPUTS + i for k in range(n_in)] for i in range(STEPS)])
        self._none_col = self.op_names.index(NONE_OP)

    def masks(self) -> tuple[torch.Tensor | None, ...]:
        return (None, self._input_mask, None, self._input_mask)

    def edge_weights(self, w_op: torch.Tensor, w_in: torch.Tensor) -> torch.Tensor:
        """(14, 8) supernet weights of one cell type from its op and input samples.

        The floor is only needed when the samples carry gradients (the search steps);
        eq. 40's calibration samples do not, and run the single sampled path.
        """
        blocks = [w_in[i, : INPUTS + i, None] * w_op[i, None, :] for i in range(STEPS)]
        w = torch.cat(blocks, dim=0)
        if not self.single_path and w.requires_grad:
            w = w + FLOOR
        zero = w.new_zeros(w.shape[0], 1)
        return torch.cat([w[:, : self._none_col], zero, w[:, self._none_col :]], dim=1)

    def forward(self, supernet: nn.Module, x: torch.Tensor, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        op_n, in_n, op_r, in_r = samples
        return supernet(x, [self.edge_weights(op_n, in_n), self.edge_weights(op_r, in_r)])

    def derive(self, alphas: Sequence[torch.Tensor]) -> Genotype:
        op_n, in_n, op_r, in_r = (a.detach().cpu() for a in alphas)
        choices: list[str | int] = []
        for ops, ins in ((op_n, in_n), (op_r, in_r)):
            choices.extend(self._cell(ops, ins))
        return self.space.genotype(choices)

    def _cell(self, ops: torch.Tensor, ins: torch.Tensor) -> list[str | int]:
        out: list[str | int] = []
        for i in range(STEPS):
            top_ops = _top(ops[i], KEEP)
            top_ins = _top(ins[i, : INPUTS + i], KEEP)
            if self.pairing == "shared-argmax-op":
                top_ops = [top_ops[0]] * KEEP
            for o, k in zip(top_ops, top_ins, strict=True):
                out += [self.cell_ops[o], k]
        return out


def _top(row: torch.Tensor, k: int) -> list[int]:
    """Indices of the k largest entries, ties broken by the lower index (stable)."""
    order = sorted(range(row.numel()), key=lambda j: (-float(row[j]), j))
    return order[:k]

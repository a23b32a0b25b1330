"""The relaxation of spaces whose supernet takes one (edges x ops) weight matrix.

NAS-Bench-201's supernet is the case in point: α ∈ R^{6x5}, shared by all cells, one
straight-through sample per edge per step, and the per-edge arg-max as the derived cell
(notes §5.2). Any third-party space whose supernet has a single ``arch_parameters()``
tensor of shape (E, len(op_names)) and ``forward(x, weights)`` fits as well, which is
why this is keyed on that contract rather than on the space's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch
from torch import nn

from nasforge.errors import CapabilityError
from nasforge.genotype import Genotype
from nasforge.search_space import SearchSpace
from nasforge_nasi.relaxation import Relaxation


class RowwiseRelaxation(Relaxation):
    """One categorical over ``space.op_names`` per row of the supernet's only α."""

    def __init__(self, space: SearchSpace, supernet: nn.Module, *, single_path: bool = False) -> None:
        params = list(supernet.arch_parameters())  # type: ignore[operator]
        n_ops = len(space.op_names)
        if len(params) != 1 or params[0].ndim != 2 or params[0].shape[1] != n_ops:
            shapes = [tuple(p.shape) for p in params]
            raise CapabilityError(
                f"NASI's row-wise relaxation needs one (edges x {n_ops}) architecture parameter, "
                f"space '{space.name}' has {shapes}"
            )
        self.space = space
        self.shapes = ((int(params[0].shape[0]), n_ops),)
        self.single_path = single_path
        self._takes_sparse = "sparse" in inspect.signature(supernet.forward).parameters

    def forward(self, supernet: nn.Module, x: torch.Tensor, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        (w,) = samples
        if self.single_path and self._takes_sparse:
            return supernet(x, w, sparse=True)
        return supernet(x, w)

    def derive(self, alphas: Sequence[torch.Tensor]) -> Genotype:
        (alpha,) = alphas
        index = alpha.detach().argmax(dim=-1).tolist()
        return self.space.genotype([self.space.op_names[k] for k in index])

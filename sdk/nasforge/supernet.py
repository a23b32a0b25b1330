"""The protocol weight-sharing networks follow, so one-shot strategies work on any space.

DARTS, PR-DARTS, NASI and NESBS all need the same things of a supernet: architecture
parameters apart from weights, a forward that takes externally made edge weights
(softmax, Gumbel samples, binary gates), and a way back to a discrete genotype.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from nasforge.genotype import Genotype


@runtime_checkable
class Supernet(Protocol):
    def arch_parameters(self) -> list[nn.Parameter]:
        """The architecture parameters (alphas), optimised apart from the weights."""
        ...

    def weight_parameters(self) -> Iterator[nn.Parameter] | list[nn.Parameter]:
        """Every other trainable parameter."""
        ...

    def forward(self, x: torch.Tensor, weights: Any = None, *, sparse: bool = False) -> torch.Tensor:
        """``weights`` overrides the softmax of the alphas; ``sparse`` skips zero-weight ops."""
        ...

    def genotype(self, weights: Any = None) -> Genotype:
        """The discrete architecture the (given or own) weights point to."""
        ...

"""How NASI's categorical architecture distribution maps onto one space's supernet.

NASI itself only needs: the shapes of the logits α (one categorical per row), which
entries a row may choose (masks), how sampled one-hot rows become the supernet's
forward weights, and how the final logits α* become a genotype. Each space answers
those four questions in a subclass; the search loop knows nothing else about spaces.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype


class Relaxation(abc.ABC):
    """A space's categorical relaxation for NASI (see the module docstring)."""

    #: Shape of each logits tensor; each row is one categorical decision.
    shapes: tuple[tuple[int, int], ...]

    def masks(self) -> tuple[torch.Tensor | None, ...]:
        """Bool tensors of allowed entries per logits tensor (None: all allowed)."""
        return tuple(None for _ in self.shapes)

    @abc.abstractmethod
    def forward(self, supernet: nn.Module, x: torch.Tensor, samples: Sequence[torch.Tensor]) -> torch.Tensor:
        """Logits of the supernet on ``x`` under the sampled one-hot rows ``samples``."""

    @abc.abstractmethod
    def derive(self, alphas: Sequence[torch.Tensor]) -> Genotype:
        """The arg-max architecture of the logits (paper: A* = argmax p_α*(A))."""

    def sampled_genotype(self, samples: Sequence[torch.Tensor]) -> Genotype:
        """The architecture a set of one-hot samples selects (for logs and fallbacks)."""
        return self.derive([s.detach() for s in samples])

    def size(self) -> int:
        return sum(r * c for r, c in self.shapes)

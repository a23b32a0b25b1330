"""Several networks of one space as one module: the ``stack`` capability of a search space.

Networks of one space often differ only in which operation sits where, so several of them
can share every kernel launch: per-network weights side by side (grouped convolutions),
each network's choice picked per channel. A space that can do this declares the ``stack``
capability (``nasforge.kernel.search_space.STACK``) and defines
``network_stack(cells, *, dtype=torch.float32, **build_options) -> NetworkStack``;
batched scoring (``nasforge.tools.scoring.stacked``) uses only what this protocol says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast, runtime_checkable

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype


@runtime_checkable
class NetworkStack(Protocol):
    """``cells`` networks of one space run as one module.

    * ``pack(i, g, network, arena)`` copies the weights of ``g``'s stand-alone network (as
      the space's seeded build made it) into network ``i``'s part of ``arena``, a flat
      uint8 CPU tensor of ``nbytes``;
    * ``module(arena, start, count)`` is the module of networks ``start .. start+count``
      whose weights are views of ``arena`` (on the arena's device: one copy moves them
      all); ``arrange(module, genotypes)`` points its networks at ``genotypes``. Called
      with ``x`` of shape (batch, count, *input) it returns (batch, count, classes),
      network ``k``'s slice being what ``g_k``'s own network computes on ``x[:, k]``;
    * a Conv/Linear/ReLU module that only some networks use carries ``stack_cells``, one
      bool per network of its module (set by ``arrange``), so per-network sums leave it
      out where the network's own has no such layer; a Conv layer's output channels are
      the networks' in order (``groups=count``), so network ``k``'s weights are
      ``weight.view(count, -1)[k]``.
    """

    cells: int
    nbytes: int

    def pack(self, index: int, g: Genotype, network: nn.Module, arena: torch.Tensor) -> None: ...

    def module(self, arena: torch.Tensor, start: int = 0, count: int | None = None) -> nn.Module: ...

    def arrange(self, module: nn.Module, genotypes: Sequence[Genotype]) -> None: ...


class StackingSpace(Protocol):
    """The optional method a space with the ``stack`` capability defines (kept off the
    ``SearchSpace`` class, so that the Strategy contract's imports stay small)."""

    def network_stack(
        self, cells: int, *, dtype: torch.dtype = ..., **build_options: object
    ) -> NetworkStack: ...


def stacking(space: object) -> StackingSpace:
    """``space`` as a :class:`StackingSpace`: its ``network_stack`` method, checked to exist
    (a space declaring the capability without the method is a plugin mistake)."""
    if not callable(getattr(space, "network_stack", None)):
        raise TypeError(
            f"{type(space).__name__} declares the stack capability but has no network_stack method"
        )
    return cast(StackingSpace, space)


__all__ = ["NetworkStack", "StackingSpace", "stacking"]

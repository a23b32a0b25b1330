"""The supernet contract: all that a one-shot method (DARTS, PR-DARTS, NASI, ...) may use.

A space's ``supernet(**cfg)`` returns an ``nn.Module`` that also offers the members of
:class:`Supernet`. One-shot methods use those and nothing else (no space name, no
space's constants), so a space that implements them gets every one-shot method:

- ``topology``: one :class:`~nasforge.kernel.supernet_topology.CellTopology` per architecture
  tensor (mixed edges, candidate ops and their roles, inputs, output, discretisation rule);
- ``arch_parameters()`` / ``weight_parameters()``: the architecture tensors, apart from
  every other trainable parameter (bilevel methods optimise them separately);
- ``forward(x, weights, *, sparse)``: logits under edge weights made outside (softmax,
  Gumbel samples, hard-concrete gates, simplex points), one tensor per architecture
  tensor; zero-weight ops are skipped where that cannot change a gradient;
- ``kept_edges(g)`` / ``genotype_of(kept)``: a genotype as the edges its cells keep, and
  back (the space's own encoding stays the space's);
- ``derive(scores, *, exclude, distinct_sources)`` and ``one_hot_weights(g)``: the genotype
  the scores select under the topology's rule, and the edge weights that run exactly
  ``g`` (weight inheritance). :class:`SupernetMixin` implements both from the members above.

See CONTRIBUTING.md ("Supernet contract") for what each member must guarantee.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.supernet_discretise import discretise, one_hot_weights
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge

#: Edge weights: one tensor per architecture tensor, each of its cell's ``shape``.
EdgeWeights = Sequence[torch.Tensor]
#: A discrete architecture as its kept edges, one tuple per cell topology.
KeptCells = Sequence[Sequence[KeptEdge]]

CONTRACT_MEMBERS: tuple[str, ...] = (
    "topology",
    "arch_parameters",
    "weight_parameters",
    "forward",
    "kept_edges",
    "genotype_of",
    "derive",
    "one_hot_weights",
)


@runtime_checkable
class Supernet(Protocol):
    """A weight-sharing network one-shot methods can search (an ``nn.Module`` as well)."""

    @property
    def topology(self) -> tuple[CellTopology, ...]:
        """One cell topology per architecture tensor, in :meth:`arch_parameters` order."""
        ...

    def arch_parameters(self) -> list[nn.Parameter]:
        """The architecture tensors, one per topology cell, each of shape ``cell.shape``."""
        ...

    def weight_parameters(self) -> list[nn.Parameter]:
        """Every trainable parameter that is not an architecture tensor."""
        ...

    def train(self, mode: bool = True) -> Any:
        """Training mode, as an ``nn.Module`` sets it."""
        ...

    def eval(self) -> Any:
        """Evaluation mode, as an ``nn.Module`` sets it."""
        ...

    def forward(
        self, x: torch.Tensor, weights: EdgeWeights | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        """Logits; each edge outputs ``sum_op weights[cell][row, op] * op(x)``.

        ``weights=None`` is the supernet's own relaxation (softmax over each row of its
        architecture tensors). Ops whose weight is exactly zero are not computed when
        ``sparse`` is true or the weight tensor does not require grad; otherwise every op
        runs, so straight-through estimators reach ops weighted zero. The zero op never
        needs computing. A node whose every op is skipped is zero.
        """
        ...

    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        """The edges each cell of ``g`` keeps (one tuple per topology cell)."""
        ...

    def genotype_of(self, kept: KeptCells) -> Genotype:
        """The genotype whose cells keep exactly ``kept`` (inverse of :meth:`kept_edges`)."""
        ...

    def derive(
        self,
        scores: EdgeWeights,
        *,
        exclude: Collection[str] = (),
        distinct_sources: bool | None = None,
    ) -> Genotype:
        """The genotype the per-(edge, op) ``scores`` select under each cell's rule."""
        ...

    def one_hot_weights(self, g: Genotype) -> list[torch.Tensor]:
        """Edge weights (no gradient) under which the supernet computes exactly ``g``."""
        ...


class SupernetMixin:
    """``derive`` and ``one_hot_weights`` from ``topology``, ``genotype_of`` and ``kept_edges``.

    Mix it into a supernet module (before ``nn.Module``) so that every space derives by
    the same, tested implementation of the rules in :mod:`nasforge.kernel.supernet_discretise`.
    """

    topology: tuple[CellTopology, ...]
    arch_parameters: Callable[[], list[nn.Parameter]]
    kept_edges: Callable[[Genotype], tuple[tuple[KeptEdge, ...], ...]]
    genotype_of: Callable[[KeptCells], Genotype]

    def derive(
        self,
        scores: EdgeWeights,
        *,
        exclude: Collection[str] = (),
        distinct_sources: bool | None = None,
    ) -> Genotype:
        """Each cell's rule applied to its scores; ops a cell lacks are ignored in ``exclude``."""
        cells = self.topology
        if len(scores) != len(cells):
            raise ValueError(
                f"derive needs {len(cells)} score tensor(s), one per cell type, got {len(scores)}"
            )
        kept = []
        for cell, s in zip(cells, scores, strict=True):
            own = [op for op in exclude if op in cell.ops.names]  # a cell without the op has none to keep
            kept.append(discretise(cell, s, exclude=own, distinct_sources=distinct_sources))
        return self.genotype_of(kept)

    def one_hot_weights(self, g: Genotype) -> list[torch.Tensor]:
        """Weight 1 on every (edge, op) ``g`` keeps, dtype and device of the alphas."""
        cells = self.kept_edges(g)
        return [
            one_hot_weights(cell, kept, like=a.detach())
            for cell, kept, a in zip(self.topology, cells, self.arch_parameters(), strict=True)
        ]


def as_supernet(module: Any, *, by: str) -> Supernet:
    """``module`` if it meets the contract, else a CapabilityError saying what ``by`` misses."""
    missing = [name for name in CONTRACT_MEMBERS if not hasattr(module, name)]
    if not isinstance(module, nn.Module):
        missing.insert(0, "nn.Module")
    if missing:
        raise CapabilityError(
            f"{by} needs a supernet following the supernet contract; "
            f"{type(module).__name__} lacks {missing} (see CONTRIBUTING.md, 'Supernet contract')"
        )
    cells = tuple(module.topology)
    if not cells or not all(isinstance(c, CellTopology) for c in cells):
        raise CapabilityError(
            f"{by}: {type(module).__name__}.topology must be a non-empty tuple of CellTopology"
        )
    names = [c.name for c in cells]
    if len(set(names)) != len(names):
        raise CapabilityError(f"{by}: cell names must be unique, got {names}")
    shapes = [tuple(p.shape) for p in module.arch_parameters()]
    if shapes != [c.shape for c in cells]:
        raise CapabilityError(
            f"{by}: architecture tensors {shapes} do not match the topology's {[c.shape for c in cells]}"
        )
    return module


def supernet_option_names(space: SearchSpace) -> frozenset[str] | None:
    """Keyword options ``space.supernet`` takes: the space's ``supernet_options`` if it
    declares them, else the names in its signature; None when unknown (``**cfg``).

    One-shot methods fill options such as ``num_classes`` from the data only where the
    space's supernet takes them.
    """
    if space.supernet_options is not None:
        return frozenset(space.supernet_options)
    params = inspect.signature(space.supernet).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)

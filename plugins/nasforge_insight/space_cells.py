"""The cells of any space's genotype, read through the core's supernet contract.

A space that declares ``supernet`` describes its cells as :class:`nasforge.CellTopology`
(inputs, output nodes, the zero op's role, the discretisation rule) and reads a genotype's
edges with ``kept_edges(g)``, and turns edges back into a genotype with ``genotype_of``.
That is all the chapter-4 diagnostics need, so they work on NAS-Bench-201, DARTS and any
third-party cell space alike, without knowing any of them by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.supernet import as_supernet
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge
from nasforge_insight.cell_graph import CellGraph

#: Supernet views by space class, version and options (a space's options may change its cells).
_VIEWS: dict[tuple[type, str, str], object] = {}


def _key(space: SearchSpace) -> tuple[type, str, str]:
    return (type(space), space.version, repr(sorted(vars(space).items())))


def supernet_view(space: SearchSpace) -> object:
    """The space's supernet at default options, built once per space and options: only its
    topology, ``kept_edges`` and ``genotype_of`` are used, never its weights."""
    view = _VIEWS.get(_key(space))
    if view is not None:
        return view
    if SUPERNET not in space.capabilities:
        raise CapabilityError(
            f"space '{space.name}' exposes no cell graph: cell width and depth need the "
            "'supernet' capability (its CellTopology and kept_edges)"
        )
    module = space.supernet()
    view = as_supernet(module, by="cell diagnostics")
    _VIEWS[_key(space)] = view
    return view


def topologies(space: SearchSpace) -> tuple[CellTopology, ...]:
    return tuple(supernet_view(space).topology)  # type: ignore[attr-defined]


def graph_of(cell: CellTopology, kept: Sequence[KeptEdge]) -> CellGraph:
    return CellGraph(cell.name, kept, cell.inputs, cell.output, zero=cell.ops.zero)


def cell_graphs(space: SearchSpace, g: Genotype) -> tuple[CellGraph, ...]:
    """One graph per cell type of ``g`` (DARTS: normal, reduce; NAS-Bench-201: one cell)."""
    space.validate(g)
    view = supernet_view(space)
    kept = view.kept_edges(g)  # type: ignore[attr-defined]
    return tuple(graph_of(cell, edges) for cell, edges in zip(topologies(space), kept, strict=True))


def genotype_from_edges(space: SearchSpace, kept: Sequence[Sequence[KeptEdge]]) -> Genotype:
    """The genotype keeping ``kept`` (one edge list per cell type), validated by the space."""
    g = supernet_view(space).genotype_of([tuple(k) for k in kept])  # type: ignore[attr-defined]
    space.validate(g)
    return g

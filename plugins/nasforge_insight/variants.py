"""Random variants of a cell, exactly as Shu's thesis describes them (Appendix A.1.2).

*Connection variants*: "we fix the partial order of intermediate nodes and their
accompanying operations. We then replace the source node of their associated operations
by uniformly randomly sampling a node from their proceeding nodes in the same cell."
*Operation variants*: "we fix the partial order of intermediate nodes and their
connection topologies. We then replace the operations coupling each connection by
uniformly randomly sampling from candidate operations."

The text (thesis App. A.1.2) leaves open what the authors' code settles, and the
variants follow the code so that seed ``s`` gives the chapter's ``CONNs`` / ``OPSs``:
each edge draws its source independently (a node may read one source twice); the
reduction cell is re-sampled too, its draws interleaved with the normal cell's edge by
edge; ops are drawn for all normal edges, then all reduce edges, from the non-zero ops;
the output nodes are kept. The stream is NumPy's legacy Mersenne Twister seeded with
``s`` (a private ``RandomState``, never the global one), drawn call by call as the
authors' ``np.random.choice`` did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.supernet_topology import KeptEdge, TopKInputs
from nasforge_insight.cell_graph import CellGraph
from nasforge_insight.space_cells import cell_graphs, genotype_from_edges, topologies

#: The candidate ops of the authors' op variants for cells in their text form: the DARTS
#: primitives without 'none', in their order (``PRIMITIVES[1 + draw]``).
AUTHORS_OPS = (
    "max_pool_3x3",
    "avg_pool_3x3",
    "skip_connect",
    "sep_conv_3x3",
    "sep_conv_5x5",
    "dil_conv_3x3",
    "dil_conv_5x5",
)

Sources = Callable[[int], Sequence[int]]


def _all_before(node: int) -> Sequence[int]:
    return range(node)


def rewire(
    cells: Sequence[CellGraph], seed: int, *, sources: Sequence[Sources] | None = None
) -> tuple[CellGraph, ...]:
    """Connection variant ``seed`` of ``cells`` (edges in node order, as a genotype lists them).

    ``sources[c](node)`` are the nodes cell ``c``'s edges into ``node`` may read (default:
    every earlier node). Edges holding the zero op stay absent and draw nothing.
    """
    rng = np.random.RandomState(seed)
    pick = list(sources) if sources is not None else [_all_before] * len(cells)
    edges = [list(c.edges) for c in cells]
    for i in range(max(len(e) for e in edges)):
        for c, cell in enumerate(cells):
            if i >= len(edges[c]) or edges[c][i].op == cell.zero:
                continue
            e = edges[c][i]
            src = int(rng.choice(np.asarray(pick[c](e.target)), 1).item())
            edges[c][i] = KeptEdge(e.op, src, e.target)
    return tuple(attrs.evolve(cell, edges=tuple(e)) for cell, e in zip(cells, edges, strict=True))


def reop(
    cells: Sequence[CellGraph], seed: int, *, ops: Sequence[Sequence[str]] | None = None
) -> tuple[CellGraph, ...]:
    """Operation variant ``seed`` of ``cells``; ``ops[c]`` are cell ``c``'s candidates
    (default: :data:`AUTHORS_OPS`). Zero-op edges stay absent; all cells draw one op per edge."""
    rng = np.random.RandomState(seed)
    pools = list(ops) if ops is not None else [AUTHORS_OPS] * len(cells)
    out = []
    for cell, pool in zip(cells, pools, strict=True):
        draws = rng.choice(len(pool), len(cell.edges))
        edges = tuple(
            e if e.op == cell.zero else KeptEdge(pool[int(d)], e.source, e.target)
            for e, d in zip(cell.edges, draws, strict=True)
        )
        out.append(attrs.evolve(cell, edges=edges))
    return tuple(out)


def connection_variant(space: SearchSpace, g: Genotype, seed: int) -> Genotype:
    """``g`` with every edge's source redrawn (the thesis's connection variant ``seed``).

    Needs cells whose nodes choose their inputs (a ``TopKInputs`` rule): in a cell with
    one op per fixed edge (NAS-Bench-201) there is no source to redraw.
    """
    cells = topologies(space)
    fixed = [c.name for c in cells if not isinstance(c.rule, TopKInputs)]
    if fixed:
        raise CapabilityError(
            f"space '{space.name}': connection variants redraw each edge's source node, but cell "
            f"'{fixed[0]}' keeps one op on each fixed edge (operation variants still apply)"
        )
    graphs = rewire(cell_graphs(space, g), seed, sources=[c.sources_of for c in cells])
    return genotype_from_edges(space, [c.edges for c in graphs])


def operation_variant(space: SearchSpace, g: Genotype, seed: int) -> Genotype:
    """``g`` with every present edge's op redrawn from its cell's non-zero ops."""
    cells = topologies(space)
    graphs = reop(cell_graphs(space, g), seed, ops=[c.ops.nonzero for c in cells])
    return genotype_from_edges(space, [c.edges for c in graphs])


def connection_variants(space: SearchSpace, g: Genotype, seeds: Sequence[int]) -> list[Genotype]:
    """The connection variants of ``g`` for ``seeds`` (the authors used 1..10), in seed order.

    Never rely on the chapter's indices (its figures and tables number variants in
    opposite orders, Figs. 4.2-4.8 against Table 4.2): sort by the computed (width, depth) instead.
    """
    return [connection_variant(space, g, s) for s in seeds]

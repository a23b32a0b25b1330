"""The DARTS cell as the core's supernet contract describes it.

Two cell types (normal, reduce) share one shape: inputs 0 and 1 (the two previous
cells), computed nodes 2..5 each entered by every earlier node (14 edges, rows in
:func:`~nasforge_darts.primitives.edge_list` order), the output the concatenation of
nodes 2..5, and DARTS's discretisation: each node keeps its two strongest inputs from
distinct sources, never the zero op. One-shot methods read all of this from here
through the supernet, so none of them needs the constants of :mod:`primitives`.
"""

from __future__ import annotations

from nasforge.kernel.supernet_topology import CellTopology, OpSet, TopKInputs
from nasforge_darts.primitives import (
    CELL_TYPES,
    CONCAT,
    EDGES_PER_NODE,
    INPUTS,
    NONE,
    PARAMETRIC_OPS,
    POOL_OPS,
    PRIMITIVES,
    SKIP,
    edge_list,
)

#: The eight ops of every DARTS mixed edge, with the roles methods reason about.
DARTS_OPS = OpSet(PRIMITIVES, zero=NONE, skip=SKIP, parametric=PARAMETRIC_OPS, pools=POOL_OPS)

#: (normal, reduce): the order of the search network's architecture parameters.
TOPOLOGY: tuple[CellTopology, ...] = tuple(
    CellTopology(
        name=kind,
        ops=DARTS_OPS,
        edges=edge_list(),
        inputs=tuple(range(INPUTS)),
        output=CONCAT,
        rule=TopKInputs(k=EDGES_PER_NODE, distinct_sources=True),
    )
    for kind in CELL_TYPES
)

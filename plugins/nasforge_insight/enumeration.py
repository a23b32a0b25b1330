"""Every connection pattern of a cell topology, counted by (width, depth).

Chapter 4's point is relative: the published cells sit in the wide, shallow *tail* of
their space (thesis §4.2.2; by our count 3.0 % of the 2,700 seven-node topologies are
(4c, 2)).
A census makes that tail measurable for any space's cell: which (width, depth) pairs
exist, how many topologies each holds, the widest-shallowest and narrowest-deepest
patterns, and where a given cell falls.

What a "topology" is follows the cell's rule: with ``TopKInputs`` each computed node
chooses ``k`` sources among its candidates (distinct when the rule says so; the thesis's
count lets a node read one source twice, ``repeats=True``); with ``OneOpPerEdge`` each
edge is present or, when the zero op exists, absent. Ops do not change width or depth.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

import attrs

from nasforge.kernel.converters import to_dict
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge
from nasforge_insight.cell_graph import CellGraph, CellShape, width_depth

Shape = tuple[float, int]


def connection_patterns(cell: CellTopology, *, repeats: bool | None = None) -> Iterator[tuple[KeptEdge, ...]]:
    """Each connection pattern of ``cell`` as kept edges (ops: the first non-zero op;
    absent edges of a one-op-per-edge cell hold the zero op). ``repeats`` (TopKInputs
    only) lets a node read one source twice; None follows the rule's ``distinct_sources``."""
    op = cell.ops.nonzero[0]
    if isinstance(cell.rule, OneOpPerEdge):
        choices = [op] if cell.ops.zero is None else [op, cell.ops.zero]
        for ops in itertools.product(choices, repeat=len(cell.edges)):
            yield tuple(KeptEdge(o, s, t) for o, (s, t) in zip(ops, cell.edges, strict=True))
        return
    k = cell.rule.k
    twice = (not cell.rule.distinct_sources) if repeats is None else repeats
    pick = itertools.combinations_with_replacement if twice else itertools.combinations
    per_node = [
        [tuple(KeptEdge(op, s, node) for s in sources) for sources in pick(cell.sources_of(node), k)]
        for node in cell.computed
    ]
    for parts in itertools.product(*per_node):
        yield tuple(e for part in parts for e in part)


@attrs.frozen
class Census:
    """How the connection patterns of one cell topology spread over (width, depth)."""

    cell: str
    total: int
    counts: dict[Shape, int] = attrs.field(converter=to_dict)
    widest_shallowest: tuple[KeptEdge, ...]
    narrowest_deepest: tuple[KeptEdge, ...]

    @property
    def max_width(self) -> float:
        return max(w for w, _ in self.counts)

    @property
    def min_depth(self) -> int:
        """Over the patterns whose output an input reaches (a cut-off cell has depth 0)."""
        return min((d for _, d in self.counts if d > 0), default=0)

    def share(self, width: float, depth: int) -> float:
        """Fraction of the patterns with exactly this width and depth."""
        return self.counts.get((width, depth), 0) / self.total

    def tail(self, shape: CellShape) -> float:
        """Fraction of the patterns at least as wide *and* at most as deep as ``shape``:
        small means the cell sits in the wide, shallow tail of its space."""
        hits = sum(n for (w, d), n in self.counts.items() if w >= shape.width and d <= shape.depth)
        return hits / self.total

    def to_json(self) -> dict[str, object]:
        return {
            "cell": self.cell,
            "total": self.total,
            "max_width": self.max_width,
            "min_depth": self.min_depth,
            "counts": [{"width": w, "depth": d, "count": n} for (w, d), n in sorted(self.counts.items())],
        }


def census(cell: CellTopology, *, repeats: bool | None = None) -> Census:
    """Width/depth counts of every connection pattern of ``cell`` (see the module docstring).

    The widest-shallowest pattern maximises width, then minimises depth; the
    narrowest-deepest maximises depth, then minimises width (ties: the first enumerated).
    """
    counts: Counter[Shape] = Counter()
    best: tuple[tuple[float, int], tuple[KeptEdge, ...]] | None = None
    worst: tuple[tuple[int, float], tuple[KeptEdge, ...]] | None = None
    total = 0
    for kept in connection_patterns(cell, repeats=repeats):
        shape = width_depth(CellGraph(cell.name, kept, cell.inputs, cell.output, zero=cell.ops.zero))
        counts[(shape.width, shape.depth)] += 1
        total += 1
        wide = (shape.width, -shape.depth)
        deep = (shape.depth, -shape.width)
        if best is None or wide > best[0]:
            best = (wide, kept)
        if worst is None or deep > worst[0]:
            worst = (deep, kept)
    assert best is not None and worst is not None  # every topology has at least one pattern
    return Census(cell.name, total, counts, best[1], worst[1])

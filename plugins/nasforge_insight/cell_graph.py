"""A discrete cell as a graph, and its width and depth as Shu's thesis (ch. 4) defines them.

The thesis finds that NAS algorithms pick *wide and shallow* cells. Width is "the total
width of the intermediate nodes that are connected to the input nodes": a node whose
edges come only from the cell's inputs counts its full width ``c``, one with some edges
from other intermediate nodes the fraction of its edges that come from inputs. Depth is
"the number of connections along the longest path from input nodes to the output node".

Two resolutions of the text (thesis §4.2.2; our reading), both needed to reproduce every
number the thesis gives: only nodes that *reach the output* count towards the width (a
dangling node computes nothing the network sees), and edges holding the zero op are
absent. When the output combines several nodes (DARTS and NASNet cells concatenate them)
the output is a node of its own, one more connection deep; when it is one computed node
(NAS-Bench-201's node 3) that node is the output and is not intermediate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from nasforge.kernel.converters import to_dict
from nasforge.kernel.supernet_topology import KeptEdge


def _edges(value: Iterable[Iterable[Any]]) -> tuple[KeptEdge, ...]:
    return tuple(KeptEdge(str(op), int(s), int(t)) for op, s, t in value)


def _ints(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(n) for n in value)


@attrs.frozen
class CellShape:
    """Width (in units of the node width ``c``), depth (connections), and how they arose.

    ``contributing`` are the intermediate nodes that reach the output, ``input_share``
    each one's fraction of edges read from an input node.
    """

    width: float
    depth: int
    contributing: tuple[int, ...]
    input_share: dict[int, float] = attrs.field(converter=to_dict)

    def label(self) -> str:
        """The thesis's notation: ``3.5c, 3``."""
        return f"{self.width:g}c, {self.depth}"

    def to_json(self) -> dict[str, object]:
        return {
            "width": self.width,
            "depth": self.depth,
            "contributing": list(self.contributing),
            "input_share": {str(k): v for k, v in self.input_share.items()},
        }


@attrs.frozen
class CellGraph:
    """``edges`` (op, source, target) of one discrete cell; ``inputs`` are the nodes the cell
    receives, ``output`` the nodes whose results leave it; ``zero`` the op of an absent edge."""

    name: str
    edges: tuple[KeptEdge, ...] = attrs.field(converter=_edges)
    inputs: tuple[int, ...] = attrs.field(converter=_ints)
    output: tuple[int, ...] = attrs.field(converter=_ints)
    zero: str | None = None

    def __attrs_post_init__(self) -> None:
        if not self.inputs or not self.output:
            raise ValueError(f"cell '{self.name}' needs input and output nodes")
        for e in self.edges:
            if not 0 <= e.source < e.target:
                raise ValueError(f"cell '{self.name}': edge {e} must run from a lower to a higher node")
            if e.target in self.inputs:
                raise ValueError(f"cell '{self.name}': edge {e} enters input node {e.target}")

    @property
    def present(self) -> tuple[KeptEdge, ...]:
        """The edges that carry something (the zero op's edges are absent)."""
        return tuple(e for e in self.edges if e.op != self.zero)

    @property
    def combined_output(self) -> bool:
        """True when the output node combines several nodes (then it is a node of its own)."""
        return len(self.output) > 1

    @property
    def intermediate(self) -> tuple[int, ...]:
        """Computed nodes that are not the output node, ascending."""
        computed = {e.target for e in self.edges} | set(self.output)
        computed -= set(self.inputs)
        if not self.combined_output:
            computed -= set(self.output)
        return tuple(sorted(computed))

    def shape(self) -> CellShape:
        return width_depth(self)


def width_depth(cell: CellGraph) -> CellShape:
    """The cell's width and depth (module docstring); a cell whose output no input reaches
    has width 0 and depth 0."""
    present = cell.present
    inputs = set(cell.inputs)
    # longest path, in connections, from an input to each node (nodes no input reaches: absent)
    dist: dict[int, int] = {i: 0 for i in cell.inputs}
    for e in sorted(present, key=lambda e: (e.target, e.source)):
        if e.source in dist:
            dist[e.target] = max(dist.get(e.target, 0), dist[e.source] + 1)
    # nodes that reach the output, walking edges backwards from the output nodes
    reaching: set[int] = set()
    frontier = [n for n in cell.output if n in dist]
    while frontier:
        node = frontier.pop()
        if node in reaching:
            continue
        reaching.add(node)
        frontier.extend(e.source for e in present if e.target == node and e.source in dist)
    contributing = tuple(n for n in cell.intermediate if n in reaching)
    share: dict[int, float] = {}
    for node in contributing:
        into = [e for e in present if e.target == node and e.source in dist]
        share[node] = sum(e.source in inputs for e in into) / len(into)
    reached = [dist[n] for n in cell.output if n in dist]
    if not reached or max(reached) == 0:
        return CellShape(0.0, 0, (), {})
    depth = max(reached) + (1 if cell.combined_output else 0)
    return CellShape(float(sum(share.values())), depth, contributing, share)

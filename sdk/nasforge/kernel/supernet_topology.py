"""What a one-shot method may know about a supernet's cells: edges, ops, their roles, the rule.

Every architecture tensor of a supernet is one :class:`CellTopology`: its rows are the
mixed edges, given as (source, target) nodes; its columns are the candidate ops, named
and tagged with the roles methods reason about (the zero op, the skip, the parametric
ops, the pools); and it says how a discrete cell is read off it (the discretisation
rule). That is enough for DARTS, PR-DARTS and NASI to work on any space without knowing
its name: PR-DARTS finds its input-to-output chain and its op groups here, NASI its
per-node op and input decisions, the cell statistics their skips and depths.

Nodes are numbered in topological order (every edge runs from a lower to a higher node);
the input nodes are the ones no edge enters.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, ClassVar, NamedTuple

import attrs
from attrs import validators as v

from nasforge.kernel.converters import to_tuple


class KeptEdge(NamedTuple):
    """One edge of a discrete cell: ``op`` applied to node ``source``, summed into ``target``."""

    op: str
    source: int
    target: int


def _unique_names(_inst: Any, attr: attrs.Attribute, value: tuple[str, ...]) -> None:
    if not value or not all(isinstance(n, str) and n for n in value):
        raise ValueError(f"{attr.name} must be a non-empty tuple of non-empty strings, got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"{attr.name} must not repeat a name, got {value!r}")


@attrs.frozen
class OpSet:
    """The candidate ops of a mixed edge (the columns of an architecture tensor) and their roles.

    Methods address ops by role, never by a space's spelling: ``zero`` outputs zeros (the
    edge is absent), ``skip`` is the identity, ``parametric`` ops carry weights (they
    deepen a cell), ``pools`` are the parameter-free poolings.
    """

    names: tuple[str, ...] = attrs.field(converter=to_tuple, validator=_unique_names)
    zero: str | None = attrs.field(default=None, validator=v.optional(v.instance_of(str)))
    skip: str | None = attrs.field(default=None, validator=v.optional(v.instance_of(str)))
    parametric: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    pools: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)

    def __attrs_post_init__(self) -> None:
        roles = [r for r in (self.zero, self.skip) if r is not None] + [*self.parametric, *self.pools]
        unknown = sorted(set(roles) - set(self.names))
        if unknown:
            raise ValueError(f"op roles name ops that are not candidates: {unknown} (ops: {self.names})")
        if len(set(roles)) != len(roles):
            raise ValueError(
                f"an op has at most one role, got zero={self.zero!r}, skip={self.skip!r}, "
                f"parametric={self.parametric!r}, pools={self.pools!r}"
            )

    def column(self, op: str) -> int:
        """Column of ``op`` in an architecture tensor."""
        try:
            return self.names.index(op)
        except ValueError:
            raise ValueError(f"unknown op {op!r}; candidates: {self.names}") from None

    def columns(self, ops: Iterable[str]) -> list[int]:
        """Columns, ascending, of those of ``ops`` that are candidates here (others are skipped)."""
        wanted = set(ops)
        return [i for i, name in enumerate(self.names) if name in wanted]

    @property
    def nonzero(self) -> tuple[str, ...]:
        """The ops a discrete cell can hold as an edge (all but the zero op), in column order."""
        return tuple(n for n in self.names if n != self.zero)


@attrs.frozen
class OneOpPerEdge:
    """Every edge keeps exactly one op, its row's arg-max (NAS-Bench-201).

    The zero op is an ordinary choice here: keeping it removes the edge.
    """

    kind: ClassVar[str] = "one-op-per-edge"


@attrs.frozen
class TopKInputs:
    """Each computed node keeps its ``k`` strongest incoming (op, source) edges (DARTS: k = 2).

    With ``distinct_sources`` an edge is ranked by its best op and at most one op per
    source is kept (DARTS's rule); without it every (op, source) pair competes, so a node
    may read one source twice. The zero op is never kept: it would keep an edge that
    computes nothing.
    """

    kind: ClassVar[str] = "top-k-inputs"
    k: int = attrs.field(default=2, validator=[v.instance_of(int), v.ge(1)])
    distinct_sources: bool = attrs.field(default=True, validator=v.instance_of(bool))


Rule = OneOpPerEdge | TopKInputs


def _edges(value: Iterable[Iterable[int]]) -> tuple[tuple[int, int], ...]:
    return tuple((int(s), int(t)) for s, t in value)


def _ints(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(n) for n in value)


@attrs.frozen
class CellTopology:
    """One architecture tensor: rows are ``edges`` (source, target), columns ``ops.names``.

    ``inputs`` are the nodes the cell receives; ``output`` the nodes whose results leave
    it (one node, or several that the space concatenates or sums); ``rule`` how a discrete
    cell is read off the tensor. ``name`` labels the cell type in metrics ("cell",
    "normal", "reduce"). ``dataflow`` says the edges are all that feed the computed nodes,
    so a node whose every path from the inputs holds the zero op is zero; False for a cell
    whose edges only add to nodes another cell computes (an MLP's skip bits), where the
    zero op removes an addition and cuts nothing off.
    """

    name: str = attrs.field(validator=v.and_(v.instance_of(str), v.min_len(1)))
    ops: OpSet = attrs.field(validator=v.instance_of(OpSet))
    edges: tuple[tuple[int, int], ...] = attrs.field(converter=_edges)
    inputs: tuple[int, ...] = attrs.field(converter=_ints)
    output: tuple[int, ...] = attrs.field(converter=_ints)
    rule: Rule = attrs.field(validator=v.instance_of((OneOpPerEdge, TopKInputs)))
    dataflow: bool = attrs.field(default=True, validator=v.instance_of(bool))

    def __attrs_post_init__(self) -> None:
        _check_graph(self)

    # --- shape ------------------------------------------------------------------------
    @property
    def op_names(self) -> tuple[str, ...]:
        return self.ops.names

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of the architecture tensor (and of every edge-weight tensor) of this cell."""
        return (len(self.edges), len(self.ops.names))

    @property
    def nodes(self) -> tuple[int, ...]:
        return tuple(range(max(t for _, t in self.edges) + 1))

    @property
    def computed(self) -> tuple[int, ...]:
        """The nodes that edges enter (every node but the inputs), ascending."""
        return tuple(sorted({t for _, t in self.edges}))

    def sources_of(self, node: int) -> tuple[int, ...]:
        """The nodes with an edge into ``node``, ascending."""
        return tuple(sorted(s for s, t in self.edges if t == node))

    def row(self, source: int, target: int) -> int:
        """Row of the edge ``source -> target`` in an architecture tensor."""
        try:
            return self.edges.index((source, target))
        except ValueError:
            raise ValueError(f"cell '{self.name}' has no edge {source}->{target}") from None

    @property
    def num_nodes(self) -> int:
        """Nodes ``h`` as the DARTS-family papers count them: every node of the cell, plus the
        output node when the output combines several nodes (DARTS: 2 + 4 + 1 = 7)."""
        return len(self.nodes) + (1 if len(self.output) > 1 else 0)

    @property
    def chain(self) -> tuple[int, ...]:
        """Rows of the chain last input -> next node -> ... (the cell's deepest path).

        It follows the edges ``n -> n + 1`` from the last input node while they exist:
        NB201 0->1->2->3, DARTS 1->2->3->4->5. PR-DARTS rewards parametric ops along it.
        """
        rows = []
        node = max(self.inputs)
        while (node, node + 1) in self.edges:
            rows.append(self.edges.index((node, node + 1)))
            node += 1
        return tuple(rows)

    # --- discrete cells ---------------------------------------------------------------
    def reached(self, kept: Collection[KeptEdge]) -> frozenset[int]:
        """The nodes some input reaches through kept edges that are not the zero op."""
        live = {(e.source, e.target) for e in kept if e.op != self.ops.zero}
        seen = set(self.inputs)
        for s, t in sorted(live, key=lambda edge: edge[1]):  # edges run low -> high
            if s in seen:
                seen.add(t)
        return frozenset(seen)

    def cut_off_outputs(self, kept: Collection[KeptEdge]) -> tuple[int, ...]:
        """Output nodes no input reaches in the discrete cell ``kept`` (their value is zero
        whatever the input: the cell, and a network built of it, outputs a constant).
        Empty for a cell that is not a ``dataflow`` graph or has no zero op."""
        if not self.dataflow or self.ops.zero is None:
            return ()
        reached = self.reached(kept)
        return tuple(n for n in self.output if n not in reached)

    def check_kept(self, kept: Collection[KeptEdge]) -> None:
        """Raise ValueError unless ``kept`` is a discrete cell this topology's rule allows."""
        for e in kept:
            if e.op not in self.ops.names:
                raise ValueError(f"cell '{self.name}': unknown op {e.op!r} on edge {e.source}->{e.target}")
            self.row(e.source, e.target)
        if isinstance(self.rule, OneOpPerEdge):
            rows = sorted(self.row(e.source, e.target) for e in kept)
            if rows != list(range(len(self.edges))):
                raise ValueError(f"cell '{self.name}' keeps one op on each of its {len(self.edges)} edges")
            return
        for node in self.computed:
            into = [e for e in kept if e.target == node]
            if len(into) != self.rule.k:
                raise ValueError(
                    f"cell '{self.name}': node {node} keeps {self.rule.k} inputs, got {len(into)}"
                )
            if any(e.op == self.ops.zero for e in into):
                raise ValueError(f"cell '{self.name}': node {node} keeps the zero op {self.ops.zero!r}")


def _check_graph(cell: CellTopology) -> None:
    if not cell.edges:
        raise ValueError(f"cell '{cell.name}' needs at least one edge")
    if len(set(cell.edges)) != len(cell.edges):
        raise ValueError(f"cell '{cell.name}' lists an edge twice: {cell.edges}")
    if any(not 0 <= s < t for s, t in cell.edges):
        raise ValueError(f"cell '{cell.name}': nodes must be numbered so every edge runs low -> high")
    targets = {t for _, t in cell.edges}
    if not cell.inputs or set(cell.inputs) & targets:
        raise ValueError(f"cell '{cell.name}': inputs {cell.inputs} must be nodes no edge enters")
    if set(cell.inputs) | targets != set(cell.nodes):
        raise ValueError(f"cell '{cell.name}': every node must be an input or entered by an edge")
    if not cell.output or not set(cell.output) <= set(cell.nodes):
        raise ValueError(f"cell '{cell.name}': output {cell.output} must be nodes of the cell")
    if isinstance(cell.rule, TopKInputs):
        if not cell.ops.nonzero:
            raise ValueError(f"cell '{cell.name}': keeping inputs needs an op other than the zero op")
        per_source = 1 if cell.rule.distinct_sources else len(cell.ops.nonzero)
        short = [n for n in cell.computed if len(cell.sources_of(n)) * per_source < cell.rule.k]
        if short:
            raise ValueError(f"cell '{cell.name}': nodes {short} have fewer than k={cell.rule.k} inputs")

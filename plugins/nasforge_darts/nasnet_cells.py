"""The NASNet-search-space cells as a buildable space (``nasnet-cells``).

NASNet, AmoebaNet and ENAS published cells that the DARTS space cannot hold: five
intermediate nodes, ops outside DARTS's eight (``sep_conv_7x7``, ``conv_7x1_1x7``), and an
output that concatenates only the loose ends (AmoebaNet's normal cell: nodes 4, 5, 6). The
DARTS authors' evaluation code builds them all the same way as their own cells (their
``genotypes.py`` ships all five), so this space is that network: DARTS's evaluation
network with two edges per node, ``len(edges) // 2`` nodes and the genotype's own concat.
Shu's thesis trains exactly these (chapter 4), which is why the space exists: the
convergence study needs all five published cells and their variants built.

A genotype is the authors' text, ``Genotype(normal=[(op, src) x 10], normal_concat=[...],
reduce=[...], reduce_concat=[...])``; flat, it is the 20 normal choices (op, source), the
20 reduce choices, then 5 + 5 concat flags (nodes 2..6, 1 = concatenated). Sampling draws
ops uniformly from :data:`NASNET_OPS` and each edge's source uniformly from the earlier
nodes (a node may read one source twice, as NASNet's cell does), and concatenates the loose
ends, NASNet's rule. There is no supernet: nothing here searches by gradient; the space is
for building, short training and the black-box strategies (sample, mutate, neighbours).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
from torch import nn

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import BUILD, MUTATE, NEIGHBOURS, SAMPLE, SearchSpace
from nasforge_darts.cell_genotype import Edge, check_cell
from nasforge_darts.genotype_text import _bind_fields, _concat, _literal, _parse_call, format_cells
from nasforge_darts.primitives import CELL_OPS, CELL_TYPES, EDGES_PER_NODE, INPUTS

#: The ops of a NASNet-space cell as the DARTS code's table holds them (no zero op).
NASNET_OPS: tuple[str, ...] = (*CELL_OPS, "sep_conv_7x7", "conv_7x1_1x7")
STEPS = 5  # intermediate nodes per cell
EDGES = EDGES_PER_NODE * STEPS
NODES = tuple(range(INPUTS, INPUTS + STEPS))  # the nodes a concat may name: 2..6
NUM_CHOICES = 2 * (2 * EDGES + STEPS)


def _edges(cell: str) -> Any:
    def convert(pairs: Sequence[Any]) -> tuple[Edge, ...]:
        return check_cell(pairs, cell=cell, steps=STEPS, ops=NASNET_OPS)

    return convert


def _concat_nodes(cell: str) -> Any:
    def convert(nodes: Sequence[Any]) -> tuple[int, ...]:
        if not isinstance(nodes, list | tuple) or not nodes:
            raise InvalidGenotypeError(f"{cell}_concat must list at least one of the nodes {list(NODES)}")
        bad = [n for n in nodes if isinstance(n, bool) or n not in NODES]
        if bad or len(set(nodes)) != len(nodes):
            raise InvalidGenotypeError(
                f"{cell}_concat must list distinct nodes of {list(NODES)}, got {list(nodes)!r}"
            )
        return tuple(sorted(nodes))

    return convert


@attrs.frozen
class NasnetCells:
    """Normal and reduction cells of five nodes, each with the nodes its output concatenates."""

    normal: tuple[Edge, ...] = attrs.field(converter=_edges("normal"))  # type: ignore[misc]  # made per cell
    normal_concat: tuple[int, ...] = attrs.field(converter=_concat_nodes("normal"))  # type: ignore[misc]  # as above
    reduce: tuple[Edge, ...] = attrs.field(converter=_edges("reduce"))  # type: ignore[misc]  # made per cell
    reduce_concat: tuple[int, ...] = attrs.field(converter=_concat_nodes("reduce"))  # type: ignore[misc]  # as above

    def to_choices(self) -> tuple[str | int, ...]:
        pairs = tuple(x for pair in (*self.normal, *self.reduce) for x in pair)
        flags = tuple(int(n in concat) for concat in (self.normal_concat, self.reduce_concat) for n in NODES)
        return pairs + flags

    @classmethod
    def from_choices(cls, choices: Sequence[str | int]) -> NasnetCells:
        if len(choices) != NUM_CHOICES:
            raise InvalidGenotypeError(
                f"a nasnet-cells genotype has {NUM_CHOICES} choices (op, input for 20 edges, then "
                f"10 concat flags), got {len(choices)}"
            )
        pairs = [tuple(choices[k : k + 2]) for k in range(0, 4 * EDGES, 2)]
        flags = choices[4 * EDGES :]
        if any(f not in (0, 1) or isinstance(f, bool) for f in flags):
            raise InvalidGenotypeError(f"concat flags must be 0 or 1, got {list(flags)}")
        concat = [tuple(n for n, f in zip(NODES, flags[i : i + STEPS], strict=True) if f) for i in (0, STEPS)]
        return cls(pairs[:EDGES], concat[0], pairs[EDGES:], concat[1])

    def format(self) -> str:
        return format_cells(self)

    @classmethod
    def parse(cls, text: str) -> NasnetCells:
        fields = _bind_fields(_parse_call(text, "nasnet-cells"))
        missing = [f for kind in CELL_TYPES for f in (kind, f"{kind}_concat") if f not in fields]
        if missing:
            raise InvalidGenotypeError(f"a nasnet-cells genotype names all four fields; this lacks {missing}")
        cells = {k: _literal(fields[k], k) for k in CELL_TYPES}
        concat = {k: _concat(fields[f"{k}_concat"], f"{k}_concat", INPUTS + STEPS) for k in CELL_TYPES}
        return cls(cells["normal"], concat["normal"], cells["reduce"], concat["reduce"])


def loose_ends(edges: Sequence[Edge]) -> tuple[int, ...]:
    """The intermediate nodes no other node reads: what NASNet concatenates."""
    used = {src for _, src in edges}
    return tuple(n for n in NODES if n not in used)


class NasnetCellsSpace(SearchSpace):
    """Five-node normal + reduction cells over the DARTS code's ten ops (module docstring)."""

    name: ClassVar[str] = "nasnet-cells"
    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset({SAMPLE, MUTATE, NEIGHBOURS, BUILD})
    op_names: ClassVar[tuple[str, ...]] = NASNET_OPS

    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        NasnetCells.from_choices(choices)

    def cells(self, g: Genotype) -> NasnetCells:
        self.validate(g)
        return NasnetCells.from_choices(g.choices)

    def from_cells(self, cells: NasnetCells) -> Genotype:
        return self.genotype(cells.to_choices())

    def format(self, g: Genotype) -> str:
        return self.cells(g).format()

    def parse(self, text: str) -> Genotype:
        return self.from_cells(NasnetCells.parse(text))

    def sample(self, rng: random.Random) -> Genotype:
        drawn = []
        for _ in CELL_TYPES:
            edges = [
                (rng.choice(NASNET_OPS), rng.randrange(INPUTS + k // EDGES_PER_NODE)) for k in range(EDGES)
            ]
            drawn += [edges, loose_ends(edges)]
        return self.from_cells(NasnetCells(*drawn))

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """One edge's op changed, or one edge's source moved (the concat kept as it is)."""
        cells = self.cells(g)
        out = []
        for kind in CELL_TYPES:
            edges = list(getattr(cells, kind))
            for k, (op, src) in enumerate(edges):
                node = INPUTS + k // EDGES_PER_NODE
                moves = [(o, src) for o in NASNET_OPS if o != op] + [(op, s) for s in range(node) if s != src]
                for move in moves:
                    changed = edges[:k] + [move] + edges[k + 1 :]
                    out.append(self.from_cells(attrs.evolve(cells, **{kind: changed})))
        return out

    @property
    def size(self) -> int:
        """Genotypes: per cell, the ops and sources of 10 edges times the non-empty concats."""
        per_cell = 2**STEPS - 1
        for k in range(EDGES):
            per_cell *= len(NASNET_OPS) * (INPUTS + k // EDGES_PER_NODE)
        return per_cell**2

    def build(self, g: Genotype, **cfg: Any) -> nn.Module:
        """DARTS's evaluation network of these cells; the options are the DARTS space's
        (``C``, ``layers``, ``num_classes``, ``auxiliary``, ``drop_path``, ``in_channels``)."""
        from nasforge_darts.eval_network import EvalNetwork
        from nasforge_darts.space import network_config

        return EvalNetwork(self.cells(g), network_config(cfg))

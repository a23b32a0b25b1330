"""The structured view of a DARTS genotype: two cells of (op, input) pairs.

nasforge's :class:`~nasforge.kernel.genotype.Genotype` holds a flat tuple so every space
serialises alike; this class is the shape the networks and the DARTS text form need.
The flat order is ``op, input, op, input, ...`` for the 8 normal edges, then the 8 reduce
edges; the concatenated nodes are fixed to 2..5 and therefore not stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge_darts.primitives import CELL_OPS, EDGES_PER_NODE, INPUTS, STEPS

Edge = tuple[str, int]

CHOICES_PER_CELL = 2 * EDGES_PER_NODE * STEPS  # op and input for each of 8 edges
NUM_CHOICES = 2 * CHOICES_PER_CELL


def check_cell(
    pairs: Sequence[Any], *, cell: str = "cell", steps: int = STEPS, ops: Sequence[str] = CELL_OPS
) -> tuple[Edge, ...]:
    """Validate one cell's (op, input) pairs (two a node, ``steps`` nodes, ops from ``ops``);
    raise InvalidGenotypeError naming the fault."""
    if not isinstance(pairs, list | tuple) or len(pairs) != EDGES_PER_NODE * steps:
        got = len(pairs) if isinstance(pairs, list | tuple) else type(pairs).__name__
        raise InvalidGenotypeError(
            f"{cell} cell needs {EDGES_PER_NODE * steps} (op, input) pairs ({steps} nodes of two), got {got}"
        )
    out = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InvalidGenotypeError(f"{cell} edge {k}: expected (op, input), got {pair!r}")
        op, src = pair
        node = INPUTS + k // EDGES_PER_NODE
        if op not in ops:
            hint = " ('none' exists only in the supernet)" if op == "none" else ""
            raise InvalidGenotypeError(
                f"{cell} edge {k}: unknown op {op!r}{hint}; expected one of {list(ops)}"
            )
        if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < node:
            raise InvalidGenotypeError(
                f"{cell} edge {k} feeds node {node}: input must be an int in [0, {node}), got {src!r}"
            )
        out.append((op, src))
    return tuple(out)


def _normal_converter(pairs: Sequence[Any]) -> tuple[Edge, ...]:
    return check_cell(pairs, cell="normal")


def _reduce_converter(pairs: Sequence[Any]) -> tuple[Edge, ...]:
    return check_cell(pairs, cell="reduce")


@attrs.frozen
class CellGenotype:
    """A normal and a reduction cell; each node ``2+i`` reads edges ``2i`` and ``2i+1``."""

    normal: tuple[Edge, ...] = attrs.field(converter=_normal_converter)
    reduce: tuple[Edge, ...] = attrs.field(converter=_reduce_converter)

    def cell(self, kind: str) -> tuple[Edge, ...]:
        if kind not in ("normal", "reduce"):
            raise ValueError(f"cell kind must be 'normal' or 'reduce', got {kind!r}")
        return self.normal if kind == "normal" else self.reduce

    def to_choices(self) -> tuple[str | int, ...]:
        return tuple(x for pair in (*self.normal, *self.reduce) for x in pair)

    @classmethod
    def from_choices(cls, choices: Sequence[str | int]) -> CellGenotype:
        if len(choices) != NUM_CHOICES:
            raise InvalidGenotypeError(
                f"a DARTS genotype has {NUM_CHOICES} choices (op, input for 16 edges), got {len(choices)}"
            )
        pairs = [tuple(choices[k : k + 2]) for k in range(0, NUM_CHOICES, 2)]
        half = EDGES_PER_NODE * STEPS
        return cls(normal=pairs[:half], reduce=pairs[half:])

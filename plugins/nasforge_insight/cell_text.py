"""Cells in the form their authors released them: ``Genotype(normal=[(op, src), ...], ...)``.

Every published cell of chapter 4 (NASNet, AmoebaNet, ENAS, DARTS, SNAS) is distributed
as this namedtuple text. NASNet-space cells have five intermediate nodes and ops no
registered space may hold (``sep_conv_7x7``), so their width and depth are computed from
the text itself: edges ``2k`` and ``2k+1`` feed node ``M + k`` (M = 2 input nodes) and
the ``*_concat`` nodes form the output.
"""

from __future__ import annotations

import ast
from typing import Any

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge_insight.cell_graph import CellGraph

#: The two cell types of the form, in its field order.
CELL_TYPES = ("normal", "reduce")
INPUTS = 2
EDGES_PER_NODE = 2
#: The op of an absent edge in this form.
ZERO = "none"


def _literal(node: ast.expr, field: str) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        return list(range(*(ast.literal_eval(a) for a in node.args)))
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise InvalidGenotypeError(f"field '{field}' is not a literal: {ast.unparse(node)}") from None


def parse_fields(text: str) -> dict[str, Any]:
    """The keyword fields of ``Genotype(...)`` text (or of a dict literal with those keys)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise InvalidGenotypeError(f"not a Genotype(...) text: {exc.msg}") from None
    if isinstance(tree, ast.Call):
        if tree.args:
            raise InvalidGenotypeError("write the cells as keywords: Genotype(normal=..., normal_concat=...)")
        return {k.arg: _literal(k.value, k.arg or "") for k in tree.keywords if k.arg}
    if isinstance(tree, ast.Dict):
        return {
            ast.literal_eval(k): _literal(v, "") for k, v in zip(tree.keys, tree.values, strict=True) if k
        }
    raise InvalidGenotypeError("not a Genotype(...) text")


def cell_from_pairs(name: str, pairs: Any, concat: Any) -> CellGraph:
    """One cell from its (op, source) pairs, two per intermediate node, and its concat list."""
    if not isinstance(pairs, list | tuple) or not pairs or len(pairs) % EDGES_PER_NODE:
        raise InvalidGenotypeError(f"{name}: expected an even number of (op, source) pairs, got {pairs!r}")
    edges = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise InvalidGenotypeError(f"{name} edge {k}: expected (op, source), got {pair!r}")
        node = INPUTS + k // EDGES_PER_NODE
        src = pair[1]
        if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < node:
            raise InvalidGenotypeError(f"{name} edge {k} feeds node {node}: source must be in [0, {node})")
        edges.append((pair[0], src, node))
    last = INPUTS + len(pairs) // EDGES_PER_NODE - 1
    if (
        not isinstance(concat, list | tuple)
        or not concat
        or not all(isinstance(n, int) and INPUTS <= n <= last for n in concat)
    ):
        raise InvalidGenotypeError(f"{name}_concat must list nodes in [{INPUTS}, {last}], got {concat!r}")
    return CellGraph(name, edges, tuple(range(INPUTS)), tuple(concat), zero=ZERO)


def parse_cells(text: str) -> tuple[CellGraph, ...]:
    """The (normal, reduce) cells of ``Genotype(normal=..., normal_concat=..., ...)`` text."""
    fields = parse_fields(text)
    missing = [f for kind in CELL_TYPES for f in (kind, f"{kind}_concat") if f not in fields]
    if missing:
        raise InvalidGenotypeError(f"Genotype text lacks {', '.join(missing)}")
    return tuple(cell_from_pairs(kind, fields[kind], fields[f"{kind}_concat"]) for kind in CELL_TYPES)


def format_cells(cells: tuple[CellGraph, ...]) -> str:
    """The text of (normal, reduce) cells whose edges are in node order, two per node."""
    parts = []
    for kind, cell in zip(CELL_TYPES, cells, strict=True):
        pairs = ", ".join(f"('{e.op}', {e.source})" for e in cell.edges)
        parts.append(f"{kind}=[{pairs}], {kind}_concat={list(cell.output)}")
    return f"Genotype({', '.join(parts)})"

"""The DARTS genotype text form, written and read without ``eval``.

Published cells circulate as the repr of DARTS's ``Genotype`` namedtuple, so that text is
the canonical string. Reading walks the Python AST and accepts only literal lists, tuples,
strings and ints (plus ``range(2, 6)``, which is how the DARTS code writes the concat),
so a pasted string can never run code. The text is user input of any size, so it is also
bounded before and while it is read: a length cap, a node count, a nesting depth, and
``range`` read arithmetically (``range(0, 10**12)`` is two ints, never a trillion-element
list) with its nodes checked against the cell's nodes.
"""

from __future__ import annotations

import ast
from typing import Any

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge_darts.cell_genotype import CellGenotype, Edge
from nasforge_darts.primitives import CONCAT, INPUTS, STEPS

_FIELDS = ("normal", "normal_concat", "reduce", "reduce_concat")
#: Longest text read: a DARTS genotype is about 400 characters, with generous spacing 1,000.
MAX_TEXT = 4096
#: Most syntax nodes: a genotype has about 120 (16 pairs of 3 nodes, lists, names).
MAX_NODES = 1000
#: Deepest literal nesting: a list of (op, input) tuples is 2.
MAX_DEPTH = 4
#: Nodes of a cell (inputs and intermediate nodes): every concat node is one of them.
CELL_NODES = INPUTS + STEPS


def format_cells(cells: CellGenotype | Any) -> str:
    """``Genotype(normal=[('sep_conv_3x3', 0), ...], normal_concat=[2, 3, 4, 5], ...)``: the
    cells' own concat where they name one (NASNet-space cells), else every intermediate node."""

    def pairs(edges: tuple[Edge, ...]) -> str:
        return "[" + ", ".join(f"({op!r}, {src})" for op, src in edges) + "]"

    def concat(kind: str) -> str:
        return "[" + ", ".join(str(n) for n in getattr(cells, f"{kind}_concat", CONCAT)) + "]"

    return (
        f"Genotype(normal={pairs(cells.normal)}, normal_concat={concat('normal')}, "
        f"reduce={pairs(cells.reduce)}, reduce_concat={concat('reduce')})"
    )


def parse_cells(text: str) -> CellGenotype:
    """Inverse of :func:`format_cells`; also takes positional fields and ``range(2, 6)``."""
    call = _parse_call(text)
    fields = _bind_fields(call)
    for name in ("normal_concat", "reduce_concat"):
        if name in fields and _concat(fields[name], name) != list(CONCAT):
            raise InvalidGenotypeError(
                f"{name} must be {list(CONCAT)} (this space concatenates every intermediate node)"
            )
    for name in ("normal", "reduce"):
        if name not in fields:
            raise InvalidGenotypeError(f"genotype string lacks the '{name}' cell")
    normal = _literal(fields["normal"], "normal")
    reduce = _literal(fields["reduce"], "reduce")
    for name, value in (("normal", normal), ("reduce", reduce)):
        if not isinstance(value, list):
            raise InvalidGenotypeError(f"'{name}' must be a list of (op, input) pairs")
    return CellGenotype(normal=normal, reduce=reduce)


def _parse_call(text: str, kind: str = "DARTS") -> ast.Call:
    """The ``Genotype(...)`` call of ``text``, refusing sizes no genotype has before parsing;
    ``kind`` names the space's genotypes in the messages."""
    if not isinstance(text, str):
        raise InvalidGenotypeError(f"expected a genotype string, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise InvalidGenotypeError(
            f"a {kind} genotype string is at most {MAX_TEXT} characters, got {len(text)}"
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise InvalidGenotypeError(f"not a {kind} genotype string: {exc.msg}") from exc
    except (MemoryError, RecursionError) as exc:  # nesting the parser cannot hold
        raise InvalidGenotypeError(f"not a {kind} genotype string: nested too deeply") from exc
    nodes = sum(1 for _ in ast.walk(tree))  # ast.walk iterates: safe on deep trees
    if nodes > MAX_NODES:
        raise InvalidGenotypeError(
            f"not a {kind} genotype string: {nodes} syntax nodes (a genotype has about 120)"
        )
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Genotype"):
        raise InvalidGenotypeError(f"a {kind} genotype string must be 'Genotype(normal=..., ...)'")
    return call


def _bind_fields(call: ast.Call) -> dict[str, ast.expr]:
    if len(call.args) > len(_FIELDS):
        raise InvalidGenotypeError(f"Genotype takes at most {len(_FIELDS)} fields")
    fields: dict[str, ast.expr] = dict(zip(_FIELDS, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg not in _FIELDS:
            raise InvalidGenotypeError(f"unknown Genotype field {kw.arg!r}")
        if kw.arg in fields:
            raise InvalidGenotypeError(f"Genotype field {kw.arg!r} given twice")
        fields[kw.arg] = kw.value
    return fields


def _concat(node: ast.expr, name: str, cell_nodes: int = CELL_NODES) -> list[int]:
    """A concat field as a list of node indices: a literal list or ``range(...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        return _range(node, name, cell_nodes)
    value = _literal(node, name)
    if not isinstance(value, list) or not all(type(n) is int for n in value):
        raise InvalidGenotypeError(f"'{name}' must be a list of node indices or range(...)")
    return value


def _range(node: ast.Call, name: str, cell_nodes: int = CELL_NODES) -> list[int]:
    """``range(a[, b[, c]])`` evaluated arithmetically, its nodes bounded by the cell's."""
    args = [_literal(a, name) for a in node.args]
    if node.keywords or not 1 <= len(args) <= 3 or not all(type(a) is int for a in args):
        raise InvalidGenotypeError(f"'{name}': range() needs 1 to 3 int arguments")
    if len(args) == 3 and args[2] == 0:
        raise InvalidGenotypeError(f"'{name}': range() step must not be zero")
    nodes = range(*args)  # a range object holds three ints whatever its length
    if nodes and not (min(nodes[0], nodes[-1]) >= 0 and max(nodes[0], nodes[-1]) < cell_nodes):
        raise InvalidGenotypeError(
            f"'{name}': concat nodes must lie in [0, {cell_nodes}) (a cell has {cell_nodes} nodes)"
        )
    return list(nodes)


def _literal(node: ast.expr, name: str, depth: int = 0) -> Any:
    """Lists, tuples (read as lists), strings and ints of the AST, nothing else."""
    if depth > MAX_DEPTH:
        raise InvalidGenotypeError(f"'{name}' is nested deeper than a list of (op, input) pairs")
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item, name, depth + 1) for item in node.elts]
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    found = repr(node.value)[:40] if isinstance(node, ast.Constant) else type(node).__name__
    raise InvalidGenotypeError(
        f"'{name}' must hold only literal lists, strings and ints, "
        f"found {found} at column {getattr(node, 'col_offset', 0) + 1}"
    )

"""The DARTS genotype text form, written and read without ``eval``.

Published cells circulate as the repr of DARTS's ``Genotype`` namedtuple, so that text is
the canonical string. Reading walks the Python AST and accepts only literals (plus
``range(2, 6)``, which is how the DARTS code writes the concat), so a pasted string can
never run code.
"""

from __future__ import annotations

import ast
from typing import Any

from nasforge.errors import InvalidGenotypeError
from nasforge_darts.cell_genotype import CellGenotype, Edge
from nasforge_darts.primitives import CONCAT

_FIELDS = ("normal", "normal_concat", "reduce", "reduce_concat")


def format_cells(cells: CellGenotype) -> str:
    """``Genotype(normal=[('sep_conv_3x3', 0), ...], normal_concat=[2, 3, 4, 5], ...)``."""

    def pairs(edges: tuple[Edge, ...]) -> str:
        return "[" + ", ".join(f"({op!r}, {src})" for op, src in edges) + "]"

    concat = "[" + ", ".join(str(n) for n in CONCAT) + "]"
    return (
        f"Genotype(normal={pairs(cells.normal)}, normal_concat={concat}, "
        f"reduce={pairs(cells.reduce)}, reduce_concat={concat})"
    )


def parse_cells(text: str) -> CellGenotype:
    """Inverse of :func:`format_cells`; also takes positional fields and ``range(2, 6)``."""
    if not isinstance(text, str):
        raise InvalidGenotypeError(f"expected a genotype string, got {type(text).__name__}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise InvalidGenotypeError(f"not a DARTS genotype string: {exc.msg}") from exc
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Genotype"):
        raise InvalidGenotypeError("a DARTS genotype string must be 'Genotype(normal=..., ...)'")
    fields = _bind_fields(call)
    for name in ("normal_concat", "reduce_concat"):
        if name in fields and _literal(fields[name], name) != list(CONCAT):
            raise InvalidGenotypeError(
                f"{name} must be {list(CONCAT)} (this space concatenates every intermediate node)"
            )
    for name in ("normal", "reduce"):
        if name not in fields:
            raise InvalidGenotypeError(f"genotype string lacks the '{name}' cell")
    normal = _literal(fields["normal"], "normal")
    reduce = _literal(fields["reduce"], "reduce")
    for name, value in (("normal", normal), ("reduce", reduce)):
        if not isinstance(value, list | tuple):
            raise InvalidGenotypeError(f"'{name}' must be a list of (op, input) pairs")
    return CellGenotype(normal=list(normal), reduce=list(reduce))


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


def _literal(node: ast.expr, name: str) -> Any:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and not node.keywords
    ):
        args = [_literal(a, name) for a in node.args]
        if not 1 <= len(args) <= 3 or not all(type(a) is int for a in args):
            raise InvalidGenotypeError(f"'{name}': range() needs 1 to 3 int arguments")
        return list(range(*args))
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise InvalidGenotypeError(f"'{name}' must be a literal: {exc}") from exc
    return list(value) if isinstance(value, tuple) and name.endswith("concat") else value

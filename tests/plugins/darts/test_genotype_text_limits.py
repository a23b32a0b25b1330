"""Issue 8, part 7: the DARTS genotype parser is bounded in time and memory by its input.

``normal_concat=range(0, 1000000000000)`` (70 characters) once built a list of a trillion
ints; an expression of a few kilobytes exhausted the recursion limit. Every such text is
now an :class:`InvalidGenotypeError` found with a few kilobytes of work.
"""

from __future__ import annotations

import ast
import random
import tracemalloc

import pytest

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge_darts.genotype_text import MAX_NODES, MAX_TEXT, format_cells, parse_cells
from nasforge_darts.space import DartsSpace

SPACE = DartsSpace()
CELLS = SPACE.cells(SPACE.sample(random.Random(0)))
TEXT = format_cells(CELLS)


def with_concat(concat: str) -> str:
    return TEXT.replace("normal_concat=[2, 3, 4, 5]", f"normal_concat={concat}")


def refused(text: str) -> str:
    """The parser's message for ``text``; its peak memory is that of a small AST, not gigabytes."""
    tracemalloc.start()
    try:
        with pytest.raises(InvalidGenotypeError) as info:
            parse_cells(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"parsing took {peak} bytes"
    return str(info.value)


@pytest.mark.parametrize(
    "concat",
    ["range(0, 1000000000000)", "range(2, 10**12)", "range(-10**15, 6)", "range(10**12, 0, -1)"],
)
def test_huge_range_is_refused_without_materialising_it(concat: str) -> None:
    message = refused(with_concat(concat))
    assert "normal_concat" in message


def test_range_nodes_must_be_nodes_of_the_cell() -> None:
    assert "must lie in [0, 6)" in refused(with_concat("range(0, 7)"))
    assert "must lie in [0, 6)" in refused(with_concat("range(-1, 5)"))


@pytest.mark.parametrize(
    ("concat", "needle"),
    [
        ("range(2, 6, 0)", "step must not be zero"),
        ("range(2.0, 6)", "found 2.0"),
        ("range(2, stop=6)", "1 to 3 int arguments"),
        ("range()", "1 to 3 int arguments"),
        ("range(5, 1, -1)", "must be [2, 3, 4, 5]"),  # the right nodes, in the wrong order
        ("range(2, 5)", "must be [2, 3, 4, 5]"),
        ("[2, 3, 4, 'x']", "node indices"),
    ],
)
def test_malformed_concat(concat: str, needle: str) -> None:
    assert needle in refused(with_concat(concat))


@pytest.mark.parametrize("concat", ["range(2, 6)", "range(2, 6, 1)", "[2, 3, 4, 5]", "(2, 3, 4, 5)"])
def test_valid_concat_forms_still_parse(concat: str) -> None:
    assert parse_cells(with_concat(concat)) == CELLS


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("Genotype(normal=(" + "1+" * 100_000 + "1), reduce=[])", f"at most {MAX_TEXT} characters"),
        ("Genotype(normal=(" + "1+" * 1500 + "1), reduce=[])", "syntax nodes"),
        ("Genotype(normal=" + "[" * 150 + "]" * 150 + ", reduce=[])", "nested deeper"),
        ("Genotype(normal=" + "(" * 1000 + ")" * 1000 + ", reduce=[])", "not a DARTS genotype string"),
        ("Genotype(normal=9**9**9**9**9**9, reduce=[])", "found BinOp"),
        ("Genotype(normal=[('sep_conv_3x3', 10**10**10)], reduce=[])", "found BinOp"),
        ("Genotype(normal=[('sep_conv_3x3', True)] * 8, reduce=[])", "found BinOp"),
        ("Genotype(normal=[('sep_conv_3x3', 1j)], reduce=[])", "found 1j"),
        ("Genotype(normal={'a': 1}, reduce=[])", "found Dict"),
        ("Genotype(normal=list(range(10**12)), reduce=[])", "found Call"),
    ],
)
def test_expressions_are_refused_cheaply(text: str, needle: str) -> None:
    assert needle in refused(text)


def test_a_genotype_is_far_inside_the_limits() -> None:
    assert len(TEXT) < MAX_TEXT // 4
    assert sum(1 for _ in ast.walk(ast.parse(TEXT, mode="eval"))) < MAX_NODES // 4
    assert parse_cells(TEXT) == CELLS

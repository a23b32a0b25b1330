"""The DARTS space: genotype text round trips, moves, encodings and refusals."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasforge import InvalidGenotypeError, get_registry
from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.genotype import Genotype
from nasforge_darts.published import DARTS_V2, PR_DARTS, PUBLISHED
from nasforge_darts.space import DartsSpace

SPACE = DartsSpace()


def test_registered_through_entry_point() -> None:
    assert get_registry(refresh=True).get("space", "darts") is DartsSpace


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_text_round_trips_exactly(name: str) -> None:
    g = SPACE.parse(PUBLISHED[name])
    assert SPACE.format(g) == PUBLISHED[name]
    assert len(g.choices) == 32


def test_flat_choices_layout() -> None:
    g = SPACE.parse(PR_DARTS)
    assert g.choices[:4] == ("skip_connect", 0, "sep_conv_3x3", 1)
    assert g.choices[16:18] == ("avg_pool_3x3", 0)


def test_parse_accepts_darts_code_repr() -> None:
    text = DARTS_V2.replace("normal_concat=[2, 3, 4, 5]", "normal_concat=range(2, 6)")
    text = text.replace("reduce_concat=[2, 3, 4, 5]", "reduce_concat=range(2, 6)")
    text = text.replace("'", '"')
    assert SPACE.parse(text) == SPACE.parse(DARTS_V2)


def test_parse_accepts_positional_fields() -> None:
    g = SPACE.parse(DARTS_V2)
    cells = SPACE.cells(g)
    text = f"Genotype({list(cells.normal)}, [2, 3, 4, 5], {list(cells.reduce)}, [2, 3, 4, 5])"
    assert SPACE.parse(text) == g


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not python (",
        "__import__('os').system('true')",
        "Genotype(normal=__import__('os'), reduce=[])",
        DARTS_V2.replace("('sep_conv_3x3', 0)", "('conv_9x9', 0)", 1),
        DARTS_V2.replace("('sep_conv_3x3', 0)", "('none', 0)", 1),
        DARTS_V2.replace("('dil_conv_3x3', 2)", "('dil_conv_3x3', 5)"),
        DARTS_V2.replace("normal_concat=[2, 3, 4, 5]", "normal_concat=[4, 5]"),
        DARTS_V2.replace(", ('skip_connect', 0), ('dil_conv_3x3', 2)", ""),
        DARTS_V2.replace("Genotype(", "Genotype(extra=1, "),
        "Genotype(reduce=[])",
    ],
)
def test_parse_rejects_malformed_text(text: str) -> None:
    with pytest.raises(InvalidGenotypeError):
        SPACE.parse(text)


def test_validate_rejects_foreign_and_bad_choices() -> None:
    good = SPACE.parse(DARTS_V2)
    with pytest.raises(InvalidGenotypeError):
        SPACE.validate(Genotype("nb201", "1", good.choices))
    with pytest.raises(InvalidGenotypeError):
        SPACE.validate(Genotype("darts", "1", good.choices[:-2]))
    bad = list(good.choices)
    bad[1] = "0"  # a node index must be an int, not its text
    with pytest.raises(InvalidGenotypeError):
        SPACE.validate(Genotype("darts", "1", bad))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_sample_format_parse_encode_round_trips(seed: int) -> None:
    g = SPACE.sample(random.Random(seed))
    assert SPACE.parse(SPACE.format(g)) == g
    assert SPACE.decode(SPACE.encode(g)) == g
    tensors, meta = g.to_tensors()
    assert Genotype.from_tensors(tensors, meta) == g


def test_sample_is_deterministic_and_keeps_sources_distinct() -> None:
    a = SPACE.sample(random.Random(3))
    assert a == SPACE.sample(random.Random(3))
    cells = SPACE.cells(a)
    for edges in (cells.normal, cells.reduce):
        for i in range(4):
            assert edges[2 * i][1] != edges[2 * i + 1][1]


def test_neighbours_differ_in_exactly_one_choice() -> None:
    g = SPACE.parse(PR_DARTS)
    nbrs = SPACE.neighbours(g)
    assert len(nbrs) == len(set(nbrs)) > 100
    for n in nbrs:
        assert sum(a != b for a, b in zip(n.choices, g.choices, strict=True)) == 1
    m = SPACE.mutate(g, random.Random(0))
    assert m != g and m in nbrs


def test_size_and_no_enumeration() -> None:
    # per cell: (7*2)^2 (7*3)^2 (7*4)^2 (7*5)^2; two cells
    assert SPACE.size == ((14 * 21 * 28 * 35) ** 2) ** 2
    with pytest.raises(CapabilityError):
        next(SPACE.enumerate())

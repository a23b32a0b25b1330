"""The ``nasnet-cells`` space: the NASNet, AmoebaNet and ENAS cells built (issue 23).

The reproduction target is the thesis's Table 4.3, C0 column: the three published cells in
the DARTS evaluation network (C=36, 20 cells, CIFAR-10; the auxiliary head not counted, as
the DARTS code counts) have 3.83 / 3.15 / 3.86 million parameters.
"""

from __future__ import annotations

import random

import pytest
import torch

from nasforge import InvalidGenotypeError, get_registry
from nasforge.kernel.seeding import seeded_build
from nasforge_darts.nasnet_cells import NASNET_OPS, NasnetCells, loose_ends
from nasforge_darts.ops import make_op
from nasforge_insight.published_cells import PUBLISHED

TABLE_4_3_C0 = {"NASNet": 3.83, "AmoebaNet": 3.15, "ENAS": 3.86}


@pytest.fixture(scope="module")
def space():
    return get_registry().space("nasnet-cells")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TABLE_4_3_C0))
def test_published_cells_have_the_thesis_parameter_counts(space, name: str) -> None:
    g = space.parse(PUBLISHED[name])
    assert space.parse(space.format(g)) == g
    model = space.build(g, C=36, layers=20, auxiliary=True)
    counted = sum(p.numel() for k, p in model.named_parameters() if "auxiliary" not in k)
    assert round(counted / 1e6, 2) == TABLE_4_3_C0[name]


def test_each_published_cell_belongs_to_exactly_one_space(space) -> None:
    darts = get_registry().space("darts")
    for name, text in PUBLISHED.items():
        owners = []
        for candidate in (darts, space):
            try:
                candidate.parse(text)
                owners.append(candidate.name)
            except InvalidGenotypeError:
                pass
        assert owners == (["darts"] if name in ("DARTS_V2", "SNAS_MILD") else ["nasnet-cells"]), name


def test_the_concat_decides_the_cell_output_width(space) -> None:
    """AmoebaNet's cells concatenate three nodes each (normal 4, 5, 6; reduce 3, 4, 6): with
    3 cells (normal, then two reductions, as DARTS places them) the last gives 3 x 4C."""
    g = space.parse(PUBLISHED["AmoebaNet"])
    model = seeded_build(lambda: space.build(g, C=4, layers=3, auxiliary=False, in_channels=1), 0)
    assert [cell.concat for cell in model.cells] == [(4, 5, 6), (3, 4, 6), (3, 4, 6)]
    assert model.classifier.in_features == 3 * 4 * 4
    assert model(torch.randn(2, 1, 8, 8)).shape == (2, 10)


def test_the_factorised_7x7_keeps_or_halves_the_resolution() -> None:
    x = torch.randn(1, 4, 8, 8)
    assert make_op("conv_7x1_1x7", 4, 1)(x).shape == (1, 4, 8, 8)
    assert make_op("conv_7x1_1x7", 4, 2)(x).shape == (1, 4, 4, 4)
    assert make_op("sep_conv_7x7", 4, 2)(x).shape == (1, 4, 4, 4)


def test_samples_concatenate_their_loose_ends_and_are_seeded(space) -> None:
    a = [space.sample(random.Random(7)) for _ in range(3)]
    assert a == [space.sample(random.Random(7)) for _ in range(3)]
    for g in (space.sample(random.Random(s)) for s in range(20)):
        cells = space.cells(g)
        assert cells.normal_concat == loose_ends(cells.normal) and cells.reduce_concat == loose_ends(
            cells.reduce
        )
        assert {op for op, _ in cells.normal + cells.reduce} <= set(NASNET_OPS)


def test_neighbours_change_one_edge_and_keep_the_concat(space) -> None:
    g = space.parse(PUBLISHED["ENAS"])
    base = space.cells(g)
    near = space.neighbours(g)
    # per edge: 8 other ops + (node - 1) other sources; nodes 2..6 have two edges each
    assert len(near) == 2 * sum(2 * (len(NASNET_OPS) - 1 + node - 1) for node in range(2, 7))
    for n in near[:40]:
        cells = space.cells(n)
        changed = sum(
            a != b for a, b in zip(base.normal + base.reduce, cells.normal + cells.reduce, strict=True)
        )
        assert changed == 1 and cells.normal_concat == base.normal_concat


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PUBLISHED["DARTS_V2"], r"needs 10 \(op, input\) pairs"),
        (PUBLISHED["NASNet"].replace("normal_concat=[2, 3, 4, 5, 6]", "normal_concat=[2, 7]"), "concat"),
        (PUBLISHED["NASNet"].replace("normal_concat=[2, 3, 4, 5, 6]", "normal_concat=[]"), "at least one"),
        (PUBLISHED["NASNet"].replace("normal_concat=[2, 3, 4, 5, 6]", "normal_concat=[3, 3]"), "distinct"),
        (PUBLISHED["NASNet"].replace("('sep_conv_5x5', 1)", "('max_pool_5x5', 1)", 1), "unknown op"),
        (PUBLISHED["NASNet"].replace("('skip_connect', 3)", "('skip_connect', 5)"), "input must be"),
        (PUBLISHED["NASNet"].replace(", reduce_concat=[4, 5, 6]", ""), "lacks"),
        ("Genotype(normal=__import__('os'), normal_concat=[2], reduce=[], reduce_concat=[2])", "literal"),
    ],
)
def test_bad_genotypes_are_refused_with_the_fault(space, text: str, message: str) -> None:
    with pytest.raises(InvalidGenotypeError, match=message):
        space.parse(text)


def test_choices_round_trip_and_refuse_bad_flags(space) -> None:
    g = space.parse(PUBLISHED["AmoebaNet"])
    assert NasnetCells.from_choices(g.choices) == space.cells(g)
    with pytest.raises(InvalidGenotypeError, match="concat flags"):
        NasnetCells.from_choices((*g.choices[:-1], 2))
    with pytest.raises(InvalidGenotypeError, match="50 choices"):
        NasnetCells.from_choices(g.choices[:-1])

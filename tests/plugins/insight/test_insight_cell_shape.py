"""Cell width and depth as seed 001 chapter 4 defines them (issue 14, step 1).

The thesis's Fig. 4.1 table of the five published normal cells is the reproduction
target; the reduce and adapted cells, and the enumeration shares, are the research
note's (§3.1), computed with the same contributing-nodes rule.
"""

from __future__ import annotations

import pytest

from nasforge import CellTopology, OpSet, TopKInputs, get_registry
from nasforge_insight.cell_graph import CellGraph
from nasforge_insight.cell_text import parse_cells
from nasforge_insight.enumeration import census
from nasforge_insight.published_cells import PUBLISHED, THESIS_NORMAL
from nasforge_insight.space_cells import cell_graphs, topologies

#: The authors' widest-shallowest rewiring of each cell (Fig. 4.26; their genotypes.py).
ADAPTED_NORMAL = {
    "NASNet": (
        "Genotype(normal=[('sep_conv_5x5', 1), ('sep_conv_3x3', 0), ('sep_conv_5x5', 1), "
        "('sep_conv_3x3', 0), ('avg_pool_3x3', 1), ('skip_connect', 0), ('avg_pool_3x3', 1), "
        "('avg_pool_3x3', 0), ('sep_conv_3x3', 1), ('skip_connect', 0)], normal_concat=[2, 3, 4, 5, 6], "
        "reduce=[], reduce_concat=[])",
        (5.0, 2),
    ),
    "AmoebaNet": (
        "Genotype(normal=[('avg_pool_3x3', 0), ('max_pool_3x3', 1), ('sep_conv_3x3', 0), "
        "('sep_conv_5x5', 1), ('sep_conv_3x3', 0), ('avg_pool_3x3', 1), ('sep_conv_3x3', 0), "
        "('skip_connect', 1), ('skip_connect', 0), ('avg_pool_3x3', 1)], normal_concat=[4, 5, 6], "
        "reduce=[], reduce_concat=[])",
        (3.0, 2),
    ),
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_the_published_normal_cells_match_the_thesis_table(name: str) -> None:
    normal, _ = parse_cells(PUBLISHED[name])
    shape = normal.shape()
    assert (shape.width, shape.depth) == THESIS_NORMAL[name]


def test_reduce_cells_match_the_research_note() -> None:
    expected = {"NASNet": (3.5, 3), "AmoebaNet": (4.0, 3), "ENAS": (4.0, 4), "DARTS_V2": (2.5, 3)}
    expected["SNAS_MILD"] = (2.5, 3)
    got = {name: parse_cells(text)[1].shape() for name, text in PUBLISHED.items()}
    assert {n: (s.width, s.depth) for n, s in got.items()} == expected


def test_dangling_nodes_do_not_count() -> None:
    """AmoebaNet adapted: nodes 2 and 3 reach no output (concat 4, 5, 6) -> 3c, not 5c."""
    from nasforge_insight.cell_text import cell_from_pairs, parse_fields

    for text, expected in ADAPTED_NORMAL.values():
        fields = parse_fields(text)
        cell = cell_from_pairs("normal", fields["normal"], fields["normal_concat"])
        assert (cell.shape().width, cell.shape().depth) == expected
    amoeba = parse_fields(ADAPTED_NORMAL["AmoebaNet"][0])
    shape = cell_from_pairs("normal", amoeba["normal"], amoeba["normal_concat"]).shape()
    assert shape.contributing == (4, 5, 6)


@pytest.mark.slow
def test_the_darts_space_gives_the_same_shapes_through_the_supernet_contract() -> None:
    space = get_registry().space("darts")
    for name in ("DARTS_V2", "SNAS_MILD"):
        g = space.parse(PUBLISHED[name])
        from_space = [c.shape() for c in cell_graphs(space, g)]
        from_text = [c.shape() for c in parse_cells(PUBLISHED[name])]
        assert [(s.width, s.depth) for s in from_space] == [(s.width, s.depth) for s in from_text]


def test_nb201_cells_single_output_node_and_absent_edges() -> None:
    space = get_registry().space("nb201")
    chain = space.parse("|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|")
    (cell,) = cell_graphs(space, chain)
    assert (cell.shape().width, cell.shape().depth) == (1.0, 3)  # 0->1->2->3: node 2 reads node 1
    wide = space.parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|"
    )
    (cell,) = cell_graphs(space, wide)
    assert (cell.shape().width, cell.shape().depth) == (2.0, 2)
    cut = space.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|none~2|")
    assert cell_graphs(space, cut)[0].shape().depth == 0  # no input reaches the output


def _full_cell(intermediate: int) -> CellTopology:
    nodes = range(2, 2 + intermediate)
    edges = [(s, t) for t in nodes for s in range(t)]
    ops = OpSet(("none", "conv"), zero="none", parametric=("conv",))
    return CellTopology("normal", ops, edges, (0, 1), tuple(nodes), TopKInputs(2, distinct_sources=True))


def test_census_bounds_and_tail_shares_match_the_research_note() -> None:
    seven = census(_full_cell(4), repeats=True)
    assert seven.total == 2700 and (seven.max_width, seven.min_depth) == (4.0, 2)
    assert round(100 * seven.share(4.0, 2), 1) == 3.0
    assert round(100 * seven.share(3.5, 3), 1) == 12.0
    assert {w for w, _ in seven.counts} == {1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0}
    assert max(d for _, d in seven.counts) == 5
    widest = CellGraph("normal", seven.widest_shallowest, (0, 1), (2, 3, 4, 5)).shape()
    deepest = CellGraph("normal", seven.narrowest_deepest, (0, 1), (2, 3, 4, 5)).shape()
    assert (widest.width, widest.depth) == (4.0, 2) and deepest.depth == 5


@pytest.mark.slow
def test_census_of_the_eight_node_cell() -> None:
    eight = census(_full_cell(5), repeats=True)
    assert eight.total == 56700 and (eight.max_width, eight.min_depth) == (5.0, 2)
    assert round(100 * eight.share(5.0, 2), 1) == 0.4


def test_census_of_registered_spaces() -> None:
    darts = census(topologies(get_registry().space("darts"))[0])
    assert darts.total == 180 and (darts.max_width, darts.min_depth) == (4.0, 2)  # distinct sources
    (nb201,) = (census(c) for c in topologies(get_registry().space("nb201")))
    assert nb201.total == 64 and (nb201.max_width, nb201.min_depth) == (2.0, 1)
    space = get_registry().space("darts")
    shape = cell_graphs(space, space.parse(PUBLISHED["DARTS_V2"]))[0].shape()
    assert 0 < darts.tail(shape) < 0.5  # DARTS sits in the wide, shallow tail

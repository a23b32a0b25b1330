"""What ``nasforge insight`` is asked about: genotypes found by the space that parses them,
published cells by name, and the thesis's variants of a genotype."""

from __future__ import annotations

import pytest

from nasforge import NasforgeError, get_registry
from nasforge_insight.cell_text import format_cells, parse_cells
from nasforge_insight.published_cells import DARTS_V2, PUBLISHED
from nasforge_insight.subjects import extreme_variants, resolve, with_op_variants, with_variants
from nasforge_insight.variants import reop, rewire

CHAIN = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"


def test_the_space_that_parses_a_genotype_owns_it() -> None:
    registry = get_registry()
    nb201 = resolve(CHAIN, registry)
    assert nb201.space is not None and nb201.space.name == "nb201" and nb201.shape_label == "1c, 3"
    darts = resolve("darts-v2", registry)
    assert darts.label == "DARTS_V2" and darts.space is not None and darts.space.name == "darts"
    assert darts.text == resolve(DARTS_V2, registry, space="darts").text
    nasnet = resolve("NASNet", registry)
    assert nasnet.space is not None and nasnet.space.name == "nasnet-cells"
    assert nasnet.label == "NASNet" and nasnet.shape_label == "5c, 2 / 3.5c, 3"
    # an op of NASNet's own search space that no registered space builds: cell text only
    text = PUBLISHED["NASNet"].replace(
        "('sep_conv_3x3', 1), ('skip_connect', 1)]", "('max_pool_5x5', 1), ('skip_connect', 1)]"
    )
    only_text = resolve(text, registry, label="nasnet (text)")
    assert only_text.space is None and only_text.label == "nasnet (text)"
    assert only_text.shape_label == "5c, 2 / 3.5c, 3"
    with pytest.raises(NasforgeError, match="no space's genotype"):
        resolve("|bogus~0|", registry)
    with pytest.raises(NasforgeError, match="variants need a space"):
        with_variants(only_text, 2)


@pytest.mark.parametrize("name", ["NASNet", "AmoebaNet", "ENAS"])
def test_nasnet_space_cells_get_the_authors_variants(name: str) -> None:
    """A space without a supernet (nasnet-cells) draws its variants on the text cells, as the
    authors did, and each one is a genotype of that space with the original concat kept."""
    base = resolve(name, get_registry())
    cells = parse_cells(PUBLISHED[name])
    conn, ops = with_variants(base, 10), with_op_variants(base, 10)
    assert [v.label for v in conn[:2]] == [f"{name} CONN1", f"{name} CONN2"]
    for seed, (c, o) in enumerate(zip(conn, ops, strict=True), start=1):
        assert c.space is base.space and o.space is base.space
        assert c.cells == rewire(cells, seed) and o.cells == reop(cells, seed)
        assert c.text == format_cells(rewire(cells, seed))
    assert all(v.cells[0].output == cells[0].output for v in conn)


def test_extreme_variants_are_the_research_notes_conn4_and_conn2() -> None:
    base = resolve("DARTS_V2", get_registry())
    widest, deepest = extreme_variants(base, 10)
    assert (
        widest.label == "DARTS_V2 CONN4 (widest, shallowest)" and widest.cells[0].shape().label() == "3.5c, 3"
    )
    assert (
        deepest.label == "DARTS_V2 CONN2 (narrowest, deepest)" and deepest.cells[0].shape().label() == "2c, 5"
    )

"""What ``nasforge insight`` is asked about: genotypes found by the space that parses them,
published cells by name, and the thesis's variants of a genotype."""

from __future__ import annotations

import pytest

from nasforge import NasforgeError, get_registry
from nasforge_insight.published_cells import DARTS_V2
from nasforge_insight.subjects import extreme_variants, resolve, with_variants

CHAIN = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"


def test_the_space_that_parses_a_genotype_owns_it() -> None:
    registry = get_registry()
    nb201 = resolve(CHAIN, registry)
    assert nb201.space is not None and nb201.space.name == "nb201" and nb201.shape_label == "1c, 3"
    darts = resolve("darts-v2", registry)
    assert darts.label == "DARTS_V2" and darts.space is not None and darts.space.name == "darts"
    assert darts.text == resolve(DARTS_V2, registry, space="darts").text
    nasnet = resolve("NASNet", registry, label="nasnet (text)")
    assert (
        nasnet.space is None and nasnet.label == "nasnet (text)" and nasnet.shape_label == "5c, 2 / 3.5c, 3"
    )
    with pytest.raises(NasforgeError, match="no space's genotype"):
        resolve("|bogus~0|", registry)
    with pytest.raises(NasforgeError, match="variants need a space"):
        with_variants(nasnet, 2)


def test_extreme_variants_are_the_research_notes_conn4_and_conn2() -> None:
    base = resolve("DARTS_V2", get_registry())
    widest, deepest = extreme_variants(base, 10)
    assert (
        widest.label == "DARTS_V2 CONN4 (widest, shallowest)" and widest.cells[0].shape().label() == "3.5c, 3"
    )
    assert (
        deepest.label == "DARTS_V2 CONN2 (narrowest, deepest)" and deepest.cells[0].shape().label() == "2c, 5"
    )

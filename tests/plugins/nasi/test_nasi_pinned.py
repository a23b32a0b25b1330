"""Short seeded NASI searches give exactly the cells they gave before the supernet contract.

The expected cells were computed by running these configurations on the code before
NASI went through the core's supernet contract (commit 0f711b2), when NB201 and DARTS
still had relaxations of their own; the generic relaxation kept every genotype and every
entry of alpha* bit for bit.
"""

from __future__ import annotations

import torch

from nasforge import get_registry
from nasforge_nasi import Nasi
from tests.plugins.nasi.tiny import TINY


def test_nasi_on_nb201_is_pinned(nb201, digits) -> None:
    torch.set_num_threads(1)
    out = Nasi().fit(nb201, digits, **TINY)
    assert (
        nb201.format(out.best)
        == "|nor_conv_1x1~0|+|nor_conv_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"
    )


def test_nasi_on_darts_is_pinned(digits) -> None:
    torch.set_num_threads(1)
    space = get_registry().get("space", "darts")()
    out = Nasi().fit(
        space, digits, steps=4, batch_size=8, calibration_samples=2, supernet={"C": 4, "layers": 3}
    )
    cells = space.cells(out.best)
    assert cells.normal == (
        ("skip_connect", 0), ("dil_conv_3x3", 1), ("dil_conv_3x3", 2), ("avg_pool_3x3", 1),
        ("dil_conv_3x3", 3), ("skip_connect", 2), ("avg_pool_3x3", 4), ("sep_conv_3x3", 3),
    )  # fmt: skip
    assert cells.reduce == (
        ("skip_connect", 1), ("dil_conv_3x3", 0), ("max_pool_3x3", 1), ("skip_connect", 0),
        ("avg_pool_3x3", 1), ("sep_conv_3x3", 2), ("max_pool_3x3", 1), ("avg_pool_3x3", 2),
    )  # fmt: skip

"""Short seeded NASI searches give exactly the cells pinned here.

First pinned on the code before NASI went through the core's supernet contract (commit
0f711b2); the generic relaxation kept every genotype and every entry of alpha* bit for
bit. Re-pinned once, when eq. 40's calibration got a stream of its own: its draws no
longer precede the search's on one generator, so the search samples other architectures.
With a given ν (no calibration) that code and the code before it derive the same cells.
"""

from __future__ import annotations

import pytest
import torch

from nasforge import get_registry
from nasforge_nasi import Nasi
from tests.plugins.nasi.tiny import TINY


def test_nasi_on_nb201_is_pinned(nb201, digits) -> None:
    torch.set_num_threads(1)
    out = Nasi().fit(nb201, digits, **TINY)
    assert (
        nb201.format(out.best)
        == "|avg_pool_3x3~0|+|skip_connect~0|skip_connect~1|+|none~0|nor_conv_3x3~1|avg_pool_3x3~2|"
    )


@pytest.mark.slow
def test_nasi_on_darts_is_pinned(digits) -> None:
    torch.set_num_threads(1)
    space = get_registry().get("space", "darts")()
    out = Nasi().fit(
        space, digits, steps=4, batch_size=8, calibration_samples=2, supernet={"C": 4, "layers": 3}
    )
    cells = space.cells(out.best)
    assert cells.normal == (
        ("dil_conv_5x5", 0), ("max_pool_3x3", 1), ("sep_conv_5x5", 1), ("skip_connect", 0),
        ("sep_conv_3x3", 0), ("avg_pool_3x3", 1), ("dil_conv_5x5", 3), ("avg_pool_3x3", 1),
    )  # fmt: skip
    assert cells.reduce == (
        ("max_pool_3x3", 0), ("skip_connect", 1), ("skip_connect", 0), ("sep_conv_3x3", 2),
        ("avg_pool_3x3", 1), ("max_pool_3x3", 0), ("sep_conv_3x3", 1), ("max_pool_3x3", 2),
    )  # fmt: skip

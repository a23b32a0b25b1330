"""Short seeded searches give exactly the cells they gave before the supernet contract.

The expected cells were computed (not chosen) by running these configurations on the
code before DARTS and PR-DARTS went through the core's supernet contract (commit
0f711b2); the refactor kept every genotype, final alpha and epoch metric bit for bit.
A change here means the methods' maths changed, and the note that changes it says why.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from nasforge import get_registry
from nasforge.kernel.datasets import TensorData
from nasforge.run.builtin_datasets import load_digits

NB201 = {"epochs": 2, "batch_size": 16, "max_batches": 2, "supernet": {"C": 4, "N": 1}}
DARTS = {"epochs": 2, "batch_size": 16, "max_batches": 2, "supernet": {"C": 2}, "darts_layers": 3}


@pytest.fixture(scope="module")
def digits() -> TensorData:
    torch.set_num_threads(1)
    data = load_digits()
    idx = torch.arange(0, len(data), 6)
    return TensorData("digits-small", data.x[idx], data.y[idx], 10)


def _search(strategy: str, space_name: str, seed: int, data: TensorData, **options: Any) -> Any:
    reg = get_registry()
    space = reg.get("space", space_name)()
    out = reg.get("strategy", strategy)(seed=seed, progress=False, **options).fit(space, data)
    return space, out.best


@pytest.mark.parametrize(
    ("strategy", "options", "expected"),
    [
        (
            "darts",
            NB201,
            "|none~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|avg_pool_3x3~2|",
        ),
        (
            "prdarts",
            {**NB201, "preset": "official-code"},
            "|nor_conv_3x3~0|+|skip_connect~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|avg_pool_3x3~2|",
        ),
    ],
)
def test_nb201_supernet_searches_are_pinned(
    digits: TensorData, strategy: str, options: dict, expected: str
) -> None:
    space, best = _search(strategy, "nb201", 0, digits, **options)
    assert space.format(best) == expected


@pytest.mark.slow
def test_prdarts_on_the_darts_supernet_is_pinned(digits: TensorData) -> None:
    space, best = _search("prdarts", "darts", 0, digits, preset="paper", **DARTS)
    cells = space.cells(best)
    assert cells.normal == (
        ("sep_conv_3x3", 0), ("sep_conv_5x5", 1), ("dil_conv_5x5", 2), ("dil_conv_5x5", 0),
        ("dil_conv_5x5", 2), ("dil_conv_3x3", 3), ("skip_connect", 0), ("sep_conv_3x3", 1),
    )  # fmt: skip
    assert cells.reduce == (
        ("dil_conv_5x5", 0), ("dil_conv_5x5", 1), ("dil_conv_5x5", 0), ("dil_conv_3x3", 2),
        ("dil_conv_5x5", 3), ("sep_conv_5x5", 1), ("skip_connect", 0), ("skip_connect", 4),
    )  # fmt: skip

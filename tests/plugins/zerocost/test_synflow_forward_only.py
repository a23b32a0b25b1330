"""SynFlow's forward-only path (networks promising monotone layers) equals its backward.

The general path takes ``sum |theta * dR/dtheta|`` by a backward pass; NAS-Bench-201
networks promise (``nasforge_monotone``) that every ``dR/dtheta >= 0`` there, so the score
is the derivative of R along the weights, carried forward as a tangent example. Both are
computed here on the same networks, including cells whose paths are all cut by ``none``
edges (R is the classifier bias alone) and pooling-only cells.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from zc_helpers import Opaque

from nasforge import get_registry
from nasforge.kernel.metric import MetricContext
from nasforge.tools.backends import is_monotone
from nasforge.tools.scoring import build_model
from nasforge.tools.scoring.scorer import score_model

TINY = {"C": 4, "N": 1, "num_classes": 10}


def synflow(model: nn.Module) -> float:
    reg = get_registry()
    metric = reg.get("metric", "synflow")()
    x = torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    ctx = MetricContext(device="cpu", num_classes=10, seed=0, chunk_size=64, loss="cross_entropy")
    return score_model(model, (x, torch.arange(4)), [metric], ctx=ctx)["synflow"].value


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.mark.parametrize(
    ("cell", "options"),
    [
        (
            "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|",
            {},
        ),
        ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", TINY),
        ("|avg_pool_3x3~0|+|skip_connect~0|none~1|+|none~0|avg_pool_3x3~1|skip_connect~2|", TINY),
        ("|nor_conv_1x1~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|", {"C": 8, "N": 2}),
    ],
)
def test_forward_only_equals_the_backward_on_chosen_cells(cell, options):
    space = get_registry().space("nb201")
    model = build_model(space, space.parse(cell), seed=1, build=options).train()
    assert is_monotone(model) and not is_monotone(Opaque(model))
    fast, general = synflow(model), synflow(Opaque(model))
    assert math.isfinite(fast) and (fast > 0) == ("nor_conv" in cell or "skip" in cell or "pool" in cell)
    assert fast == pytest.approx(general, rel=1e-13, abs=0.0)


@pytest.mark.slow
def test_forward_only_equals_the_backward_across_the_space():
    space = get_registry().space("nb201")
    cells = list(space.enumerate())[::521]  # 30 cells spread over the table
    worst = 0.0
    for g in cells:
        model = build_model(space, g, seed=0, build=TINY).train()
        fast, general = synflow(model), synflow(Opaque(model))
        worst = max(worst, abs(fast - general) / general)
    assert len(cells) == 30 and worst < 1e-13


def test_the_model_is_unchanged_and_hooks_are_gone():
    space = get_registry().space("nb201")
    model = build_model(
        space,
        space.parse("|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|none~2|"),
        seed=0,
        build=TINY,
    ).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    synflow(model)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    assert all("forward" not in vars(m) for m in model.modules())

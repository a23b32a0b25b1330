"""The flops metric's closed form (``forward_flops``, NAS-Bench-201) equals the counter.

The metric counts FLOPs by tracing a forward under torch's FlopCounterMode; a network that
knows its count in closed form may answer instead, and must then give the same number.
Checked against the counter on the same networks (wrapped so the closed form is hidden),
at several sizes, and on inputs the closed form declines (non-square, other channels).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from zc_helpers import Opaque

from nasforge import get_registry
from nasforge.kernel.metric import MetricContext
from nasforge.tools.scoring import build_model
from nasforge.tools.scoring.scorer import score_model


def flops(model: nn.Module, shape: tuple[int, ...]) -> float:
    metric = get_registry().get("metric", "flops")()
    x = torch.zeros(2, *shape)
    ctx = MetricContext(device="cpu", num_classes=10, seed=0, chunk_size=64, loss="cross_entropy")
    return score_model(model, (x, torch.zeros(2, dtype=torch.long)), [metric], ctx=ctx)["flops"].value


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "shape"),
    [
        ({"C": 4, "N": 1}, (3, 32, 32)),
        ({"C": 8, "N": 2, "num_classes": 7}, (3, 16, 16)),
        ({"C": 4, "N": 1, "in_channels": 1}, (1, 8, 8)),
        ({"C": 4, "N": 1}, (3, 15, 15)),  # odd sizes: the reductions round up
    ],
)
def test_closed_form_equals_the_counter(options, shape):
    space = get_registry().space("nb201")
    for g in list(space.enumerate())[::1301]:
        model = build_model(space, g, seed=0, build=options)
        assert model.forward_flops(shape) is not None
        assert flops(model, shape) == flops(Opaque(model), shape)


def test_inputs_the_closed_form_declines_are_counted():
    space = get_registry().space("nb201")
    model = build_model(
        space,
        space.parse(
            "|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|avg_pool_3x3~1|nor_conv_3x3~2|"
        ),
        seed=0,
        build={"C": 4, "N": 1},
    )
    assert model.forward_flops((3, 16, 12)) is None and model.forward_flops((1, 16, 16)) is None
    value = flops(model, (3, 16, 12))
    assert value == flops(Opaque(model), (3, 16, 12)) and value > 0

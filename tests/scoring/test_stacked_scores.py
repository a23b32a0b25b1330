"""Every batched (stacked) score equals the per-network definition.

K NAS-Bench-201 networks scored as one stacked module (grouped convolutions, each edge's
op picked per network) must give each network the score its own network gets, for every
metric that scores stacks: checked in float64 (the arithmetic differs only in rounding)
to 1e-6 relative on a handful of small networks, including cells with ``none`` and
``skip_connect`` edges and one whose scores are undefined (NaN/inf, flagged alike).
"""

from __future__ import annotations

import math

import pytest
import torch

from nasforge import get_registry
from nasforge.kernel.metric import MetricContext
from nasforge.tools.scoring import build_model, resolve_metrics, sample_genotypes, score_model
from nasforge.tools.scoring.stacked import StackedPasses, can_stack, per_cell_scores, score_stack

TINY = {"C": 4, "N": 1}
STACKED = ["synflow", "grad_norm", "snip", "grasp", "fisher", "fisher_channel", "jacob_cov", "naswot"]
CELLS = [
    "|none~0|+|skip_connect~0|none~1|+|nor_conv_3x3~0|avg_pool_3x3~1|nor_conv_1x1~2|",
    "|skip_connect~0|+|skip_connect~0|skip_connect~1|+|none~0|none~1|skip_connect~2|",
    "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|",  # scores undefined: flagged
    "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|",
]


def _close(a: float, b: float, rel: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


@pytest.fixture(scope="module")
def setting():
    torch.set_num_threads(1)
    space = get_registry().space("nb201")
    gs = [space.parse(c) for c in CELLS] + sample_genotypes(space, 3, seed=4)
    nets = [build_model(space, g, seed=i, build=TINY).train() for i, g in enumerate(gs)]
    stack = space.network_stack(len(gs), dtype=torch.float64, **TINY)
    arena = torch.zeros(stack.nbytes, dtype=torch.uint8)
    for i, (g, net) in enumerate(zip(gs, nets, strict=True)):
        stack.pack(i, g, net, arena)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(12, 3, 8, 8, dtype=torch.float64, generator=gen)
    y = torch.randint(0, 10, (12,), generator=gen)
    return space, gs, nets, stack, arena, (x, y)


def _module(setting):
    _, gs, _, stack, arena, _ = setting
    module = stack.module(arena)
    stack.arrange(module, gs)
    return module


@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
def test_each_stacked_metric_equals_the_per_network_definition(setting, loss):
    _, gs, nets, _, _, batch = setting
    metrics = resolve_metrics(STACKED)
    assert all(can_stack(m) for m in metrics)
    ctx = MetricContext(device="cpu", loss=loss)
    rows, failed = score_stack(_module(setting), len(gs), len(gs), batch, metrics, ctx=ctx)
    assert failed == {}
    flagged = 0
    for g, net, row in zip(gs, nets, rows, strict=True):
        alone = score_model(net.double(), batch, metrics, ctx=ctx)
        for name in STACKED:
            a, b = row[name].value, alone[name].value
            assert _close(a, b, 1e-6), (g, name, a, b)
            flagged += not math.isfinite(b)
    assert flagged >= 1  # the all-none cell's undefined scores are compared too


def test_vectorised_scores_equal_each_networks_view(setting):
    """The metrics' own batched reductions against score_shared on each network's view."""
    _, gs, _, _, _, batch = setting
    metrics = resolve_metrics(STACKED)
    needs = frozenset().union(*(m.requirements for m in metrics))
    passes = StackedPasses(_module(setting), len(gs), batch, MetricContext(device="cpu"), needs)
    for m in metrics:
        if m.info.name == "synflow":  # no per-network view: it runs the module itself
            continue
        for a, b in zip(m.score_stacked(passes), per_cell_scores(m, passes), strict=True):
            assert _close(a, b, 1e-9), (m.info.name, a, b)


def test_a_sub_stack_scores_its_networks_alike(setting):
    """An out-of-memory split scores cells a..b as a module of their own over the same weights."""
    _, gs, _, stack, arena, batch = setting
    metrics = resolve_metrics(["synflow", "grad_norm", "jacob_cov"])
    ctx = MetricContext(device="cpu")
    whole, _ = score_stack(_module(setting), len(gs), len(gs), batch, metrics, ctx=ctx)
    part = stack.module(arena, 2, 3)
    stack.arrange(part, gs[2:5])
    rows, failed = score_stack(part, 3, 3, batch, metrics, ctx=ctx)
    assert failed == {}
    for row, ref in zip(rows, whole[2:5], strict=True):
        for name, score in row.items():
            assert _close(score.value, ref[name].value, 1e-9), name


def test_a_metric_that_fails_on_a_stack_is_reported_not_raised(setting):
    _, gs, _, _, _, batch = setting

    class Broken:
        info = resolve_metrics(["grad_norm"])[0].info
        requirements = frozenset()

        def score_stacked(self, passes):
            raise ValueError("no")

    rows, failed = score_stack(_module(setting), len(gs), 2, batch, [Broken()], ctx=MetricContext())
    assert failed == {"grad_norm": "ValueError: no"} and rows == [{}, {}]

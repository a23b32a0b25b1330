"""Fisher runs in train mode, as the reference (zero-cost-nas ``fisher``: ``net.train()``).

A network handed over in eval mode (BatchNorm on running statistics) gets the same score
as the same network in train mode, and keeps its modes and running statistics afterwards.
"""

from __future__ import annotations

import copy

import pytest
import torch
import zc_helpers as H

from nasforge import MetricContext
from nasforge.tools.scoring import score_model
from nasforge_zerocost.catalogue import BY_NAME

ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|"


@pytest.mark.parametrize("name", ["fisher", "fisher_channel"])
def test_an_eval_mode_network_is_scored_in_train_mode(name: str) -> None:
    torch.set_num_threads(1)
    train = H.tiny_net(ARCH)
    evaluated = copy.deepcopy(train)
    for m in evaluated.modules():  # running statistics far from the batch's: eval mode differs
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.fill_(0.5)
            m.running_var.fill_(4.0)
    evaluated.eval()
    batch, ctx = H.batch(), MetricContext()
    want = BY_NAME[name]().score(train, batch, ctx=ctx)
    got = BY_NAME[name]().score(evaluated, batch, ctx=ctx)
    assert got == pytest.approx(want, rel=1e-6)
    assert not any(m.training for m in evaluated.modules()), "the caller's modes come back"
    for m in evaluated.modules():
        if isinstance(m, torch.nn.BatchNorm2d):  # and its running statistics are untouched
            assert torch.all(m.running_mean == 0.5) and torch.all(m.running_var == 4.0)
    shared = score_model(evaluated, batch, [BY_NAME[name](), BY_NAME["grad_norm"]()], ctx=ctx)
    assert shared[name].value == pytest.approx(want, rel=1e-6)

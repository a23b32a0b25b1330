"""What makes the shared pass cheaper than the zero-cost-nas reference, checked without a clock.

Timings belong to ``benchmarks/metrics_speed.py --compare-reference``; here the structure
that gives them is pinned: the six zero-cost proxies cost one forward of the network for
five of them plus synflow's own float64 pass (the reference runs seven forwards, GraSP's
twice, on a fresh deep copy per metric), and the scores are the reference code's own
numbers on the same networks and batch (the peer code is imported by this test only,
which is marked ``peer``: it needs ``shared/`` beside the checkout, and fails without it).
"""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nasforge import MetricContext, get_registry
from nasforge.tools.scoring import SharedPasses, score_model
from nasforge_zerocost.catalogue import BY_NAME
from tests.peer_files import peer_path

SIX = ("grad_norm", "snip", "grasp", "fisher", "jacob_cov", "synflow")
ARCHS = (
    "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|",
    "|nor_conv_1x1~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|avg_pool_3x3~1|nor_conv_1x1~2|",
    "|avg_pool_3x3~0|+|nor_conv_3x3~0|none~1|+|nor_conv_3x3~0|skip_connect~1|nor_conv_3x3~2|",
)


def net(arch: str) -> nn.Module:
    space = get_registry().space("nb201")
    torch.manual_seed(0)
    return space.build(space.parse(arch), C=4, N=1, num_classes=10).train()


def batch(n: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, 3, 8, 8, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def test_six_proxies_cost_one_main_forward_plus_synflows() -> None:
    model = net(ARCHS[0])
    calls: list[torch.dtype] = []
    model.register_forward_pre_hook(lambda _m, inp: calls.append(inp[0].dtype))
    out = score_model(model, batch(), [BY_NAME[n]() for n in SIX], ctx=MetricContext(), shared=True)
    assert all(s.ok for s in out.values())
    # the main pass (float32, the whole batch) and synflow's |θ| pass (float64, one input)
    assert calls == [torch.float32, torch.float64]


def test_main_pass_runs_once_with_every_tap_and_times_its_phases() -> None:
    metrics = [BY_NAME[n]() for n in SIX]
    needs = frozenset().union(*(m.requirements for m in metrics))
    passes = SharedPasses(net(ARCHS[0]), batch(), MetricContext(), needs=needs)
    for m in metrics:
        m.score_shared(passes)
    assert passes.main_passes == 1
    assert set(passes.phase_seconds) == {"forward", "input_grad", "backward", "hessian", "main"}
    inner = sum(v for k, v in passes.phase_seconds.items() if k != "main")
    assert inner <= passes.phase_seconds["main"]


@pytest.fixture(scope="module")
def reference_measures() -> types.ModuleType:
    reference = peer_path("peers", "zero-cost-nas", "foresight").parent
    sys.path.insert(0, str(reference.resolve()))
    try:
        from foresight.pruners import measures
    finally:
        sys.path.remove(str(reference.resolve()))
    return measures


@pytest.mark.peer
@pytest.mark.filterwarnings("ignore")  # the reference's deprecated backward hooks
@pytest.mark.parametrize("arch", ARCHS)
def test_scores_are_the_reference_codes(reference_measures: types.ModuleType, arch: str) -> None:
    """Our shared pass against zero-cost-nas ``calc_measure`` itself, metric by metric.

    Same numbers to float32 rounding; GraSP, a sum of terms of both signs, to 1e-4.
    """
    from foresight.pruners.predictive import copynet

    x, y = batch()
    ours = score_model(net(arch), (x, y), [BY_NAME[n]() for n in SIX], ctx=MetricContext(), shared=True)
    model = net(arch)
    model.get_prunable_copy = types.MethodType(copynet, model)
    for name in SIX:
        arr = reference_measures.calc_measure(name, model, "cpu", x.clone(), y, loss_fn=F.cross_entropy)
        want = float(arr) if name == "jacob_cov" else float(sum(a.detach().sum() for a in arr))
        tol = {"grasp": 1e-4, "jacob_cov": 1e-6}.get(name, 1e-5)
        assert ours[name].value == pytest.approx(want, rel=tol, abs=1e-9), name

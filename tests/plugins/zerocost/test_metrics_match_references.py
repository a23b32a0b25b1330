"""Each metric equals a plain reference implementation of its documented formula."""

from __future__ import annotations

import math

import pytest
import torch
import zc_helpers as H

from nasforge import MetricContext
from nasforge.tools.backends import batch_norm_mode
from nasforge.tools.scoring import score_model
from nasforge_zerocost.catalogue import BY_NAME, METRICS

ARCHS = (
    "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|",
    "|skip_connect~0|+|none~0|nor_conv_3x3~1|+|nor_conv_1x1~0|none~1|avg_pool_3x3~2|",
)
CTX = MetricContext()


def score(name: str, arch: str, **kwargs: str) -> float:
    model = H.tiny_net(arch)
    return BY_NAME[name](**kwargs).score(model, H.batch(), ctx=CTX)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
def test_gradient_metrics(arch: str) -> None:
    x, y = H.batch()
    gn, sn = H.ref_grad_snip(H.tiny_net(arch), x, y)
    assert score("grad_norm", arch) == pytest.approx(gn, rel=1e-5)
    assert score("snip", arch) == pytest.approx(sn, rel=1e-5)
    assert score("grasp", arch) == pytest.approx(H.ref_grasp(H.tiny_net(arch), x, y), rel=1e-4, abs=1e-6)
    assert score("fisher_channel", arch) == pytest.approx(H.ref_fisher(H.tiny_net(arch), x, y), rel=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_synflow_jacob_cov_naswot(arch: str) -> None:
    x, _ = H.batch()
    assert score("synflow", arch) == pytest.approx(
        H.ref_synflow(H.tiny_net(arch), tuple(x.shape[1:])), rel=1e-10
    )
    assert score("jacob_cov", arch) == pytest.approx(H.ref_jacob_cov(H.tiny_net(arch), x), rel=1e-4)
    assert score("naswot", arch) == pytest.approx(H.ref_naswot(H.tiny_net(arch), x), rel=1e-10)


def test_ntk_family_and_knas() -> None:
    """The per-sample kernel against an explicit per-sample loop; float64 so KNAS's cancellation-prone mean
    (‖mean g‖² is far smaller than mean ‖g‖²) is compared exactly, not to float32 noise."""
    arch = ARCHS[0]
    model = H.tiny_net(arch).double()
    x, y = H.batch()
    x = x.double()
    params = list(model.parameters())
    rows, loss_rows = [], []
    with batch_norm_mode(model, "sample"):
        for i in range(len(x)):
            out = model(x[i : i + 1])
            grads = torch.autograd.grad(out.sum(), params, retain_graph=True)
            rows.append(torch.cat([g.reshape(-1) for g in grads]))
            loss = torch.nn.functional.cross_entropy(out, y[i : i + 1])
            loss_rows.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, params)]))
    jac = torch.stack(rows)
    theta = jac @ jac.T
    eig = torch.linalg.eigvalsh(theta)

    def score64(name: str, **kwargs: str) -> float:
        return BY_NAME[name](**kwargs).score(model, (x, y), ctx=CTX)

    # the per-sample kernel (the paper presets have their own tests, test_paper_presets.py)
    m_trace = math.sqrt(float(theta.trace()) / len(x))
    assert score64("ntk_trace_per_sample") == pytest.approx(m_trace, rel=1e-9)
    assert score64("ntk_lambda_min") == pytest.approx(float(eig[0]), rel=1e-8)
    assert score64("ntk_cond_per_sample") == pytest.approx(float(eig[-1] / eig[0]), rel=1e-8)
    mean_grad = torch.stack(loss_rows).mean(0)
    assert score64("knas") == pytest.approx(float(mean_grad @ mean_grad), rel=1e-9)
    thesis = math.sqrt(abs(float(theta.sum()))) / len(x)
    assert score64("knas", variant="thesis") == pytest.approx(thesis, rel=1e-9)


def test_params_and_flops() -> None:
    model = H.tiny_net(ARCHS[0])
    assert score("params", ARCHS[0]) == sum(p.numel() for p in model.parameters())
    # flops: a 1x1 conv stem-free check is brittle; instead it must scale with resolution
    small = BY_NAME["flops"]().score(model, H.batch(hw=8), ctx=CTX)
    big = BY_NAME["flops"]().score(model, H.batch(hw=16), ctx=CTX)
    assert big == pytest.approx(4 * small, rel=0.02)


@pytest.mark.slow
def test_shared_equals_separate_for_every_metric() -> None:
    metrics = [M() for M in METRICS if not M.info.population]
    model = H.tiny_net(ARCHS[0])
    b = H.batch()
    torch.manual_seed(0)
    shared = score_model(model, b, metrics, ctx=CTX, shared=True)
    separate = score_model(model, b, metrics, ctx=CTX, shared=False)
    assert set(shared) == {m.name for m in metrics}
    for name, s in shared.items():
        assert s.ok, (name, s)
        assert s.value == pytest.approx(separate[name].value, rel=1e-6), name


def test_synflow_leaves_model_untouched() -> None:
    model = H.tiny_net(ARCHS[0])
    before = {k: v.clone() for k, v in model.state_dict().items()}
    BY_NAME["synflow"]().score(model, H.batch(), ctx=CTX)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    bn = next(m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert "forward" not in vars(bn)

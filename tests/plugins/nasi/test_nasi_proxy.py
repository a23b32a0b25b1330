"""The NASI proxy against its definition (eq. 12) and the bounds behind it (eqs. 10-11)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.tools.backends import jacobian, per_sample_grads
from nasforge.tools.backends.spec import KernelSpec
from nasforge_nasi import penalised_objective, trace_proxy


def _mlp(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))


def _batch(seed: int, b: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(b, 6, generator=gen), torch.randint(0, 4, (b,), generator=gen)


def test_proxy_is_squared_norm_of_mean_loss_gradient() -> None:
    net = _mlp(0)
    x, y = _batch(0)
    expected = 0.0
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    for p in net.parameters():
        expected += float(p.grad.pow(2).sum())
    got = float(trace_proxy(net, list(net.parameters()), x, y))
    assert got == pytest.approx(expected, rel=1e-6)


def test_proxy_is_differentiable_with_create_graph() -> None:
    net = _mlp(1)
    x, y = _batch(1)
    scale = torch.tensor(1.0, requires_grad=True)
    value = trace_proxy(lambda inp: net(inp) * scale, list(net.parameters()), x, y, create_graph=True)
    (grad,) = torch.autograd.grad(value, scale)
    assert math.isfinite(float(grad)) and float(grad) != 0.0


def test_jensen_per_sample_sum_bounds_the_proxy() -> None:
    """Eq. 11, second inequality: Σ_x ‖∇ℓ_x‖² ≥ b · ‖mean ∇ℓ‖²."""
    for seed in range(5):
        net = _mlp(seed)
        x, y = _batch(seed)
        grads = per_sample_grads(net, x, y)
        per_sample = sum(float(g.pow(2).sum()) for g in grads.values())
        assert per_sample >= x.shape[0] * float(trace_proxy(net, list(net.parameters()), x, y)) - 1e-9


def test_lipschitz_bound_and_trace_identity() -> None:
    """Eq. 10 with γ = √2 for one-sample cross-entropy, and eq. 9: tr Θ = Σ_x ‖J_x‖²_F."""
    net = _mlp(3)
    x, y = _batch(3, b=5)
    loss_grads = jacobian(net, x, y, spec=KernelSpec(output="loss", bn="sample"))
    full = jacobian(net, x, spec=KernelSpec(output="full", bn="sample"))  # rows: sample-major
    per_sample_jac = full.reshape(x.shape[0], -1, full.shape[1])
    for i in range(x.shape[0]):
        assert float(loss_grads[i].norm()) <= math.sqrt(2) * float(per_sample_jac[i].norm()) + 1e-9
    ntk = full @ full.T
    assert float(torch.trace(ntk)) == pytest.approx(float(full.pow(2).sum()), rel=1e-9)


def test_penalty_shapes() -> None:
    trace = torch.linspace(0.0, 10.0, 21)
    nu = 4.0
    assert torch.allclose(penalised_objective(trace, 1.0, nu), torch.clamp(trace, max=nu))
    tent = penalised_objective(trace, 2.0, nu)
    assert int(tent.argmax()) == int((trace - nu).abs().argmin())
    assert torch.allclose(tent[trace > nu], 2 * nu - trace[trace > nu])
    assert torch.equal(penalised_objective(trace, 0.0, nu), trace)
    with pytest.raises(ValueError):
        penalised_objective(trace, -1.0, nu)

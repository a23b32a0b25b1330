"""Second-order DARTS: the finite-difference Hessian-vector product gives the true gradient.

The reference is the exact derivative of the unrolled objective
``f(a) = L_val(w - xi * (momentum*buf + grad_w L_train(w, a) + wd*w), a)``, computed two
ways: second-order autograd, and central differences of ``f`` itself.

The checks run in float64 with the difference step scaled down (``eps_scale=1e-5``):
DARTS's default ``0.01 / |v|`` is a step of norm 0.01 in weight space, which on a tiny
ReLU/max-pool supernet crosses activation kinks, so its error there measures the network's
non-smoothness, not the implementation.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

from nasforge_darts.search_network import SearchNetwork
from nasforge_darts.unrolled import unrolled_arch_gradient

XI, MOMENTUM, WD = 0.05, 0.9, 3e-4


@pytest.fixture()
def setup() -> tuple:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = SearchNetwork(C=2, layers=3, in_channels=1, num_classes=3, arch_init_std=0.5).double()
    gen = torch.Generator().manual_seed(1)
    xt, yt = torch.randn(6, 1, 8, 8, generator=gen).double(), torch.randint(0, 3, (6,), generator=gen)
    xv, yv = torch.randn(6, 1, 8, 8, generator=gen).double(), torch.randint(0, 3, (6,), generator=gen)
    bufs = [0.1 * torch.randn_like(p) for p in net.weight_parameters()]
    return net, (xt, yt), (xv, yv), bufs


def _unrolled_objective(net, train, val, bufs, alphas, *, create_graph):  # noqa: ANN001, ANN202
    names = [n for n, p in net.named_parameters() if not n.startswith("alphas")]
    w = [p for n, p in net.named_parameters() if not n.startswith("alphas")]
    arch = {"alphas_normal": alphas[0], "alphas_reduce": alphas[1]}
    params = {**dict(zip(names, w, strict=True)), **arch}
    lt = F.cross_entropy(functional_call(net, params, (train[0],)), train[1])
    g = torch.autograd.grad(lt, w, create_graph=create_graph)
    w2 = [p - XI * (gi + WD * p + MOMENTUM * b) for p, gi, b in zip(w, g, bufs, strict=True)]
    params2 = {**dict(zip(names, w2, strict=True)), **arch}
    return F.cross_entropy(functional_call(net, params2, (val[0],)), val[1])


def _fd_hvp_gradient(net, train, val, bufs):  # noqa: ANN001, ANN202
    before = [p.detach().clone() for p in net.parameters()]
    grads = unrolled_arch_gradient(
        net.arch_parameters(),
        net.weight_parameters(),
        lambda: F.cross_entropy(net(train[0]), train[1]),
        lambda: F.cross_entropy(net(val[0]), val[1]),
        xi=XI,
        momentum=MOMENTUM,
        momentum_buffers=bufs,
        weight_decay=WD,
        eps_scale=1e-5,
    )
    after = list(net.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))  # restored
    return grads


def test_matches_exact_second_order_autograd(setup: tuple) -> None:
    net, train, val, bufs = setup
    approx = _fd_hvp_gradient(net, train, val, bufs)
    loss = _unrolled_objective(net, train, val, bufs, net.arch_parameters(), create_graph=True)
    exact = torch.autograd.grad(loss, net.arch_parameters())
    for a, e in zip(approx, exact, strict=True):
        assert torch.allclose(a, e, rtol=1e-6, atol=1e-9), (a - e).abs().max()
    # and the second-order term matters: first order alone is measurably different
    first = torch.autograd.grad(F.cross_entropy(net(val[0]), val[1]), net.arch_parameters())
    assert any(not torch.allclose(f, e, rtol=1e-2, atol=1e-6) for f, e in zip(first, exact, strict=True))


@pytest.mark.slow
def test_matches_central_differences_of_the_unrolled_objective(setup: tuple) -> None:
    net, train, val, bufs = setup
    approx = _fd_hvp_gradient(net, train, val, bufs)
    h = 1e-5
    gen = torch.Generator().manual_seed(2)
    for _ in range(4):
        which = int(torch.randint(0, 2, (1,), generator=gen))
        e, i = int(torch.randint(0, 14, (1,), generator=gen)), int(torch.randint(1, 8, (1,), generator=gen))
        values = []
        for sign in (1.0, -1.0):
            alphas = [a.detach().clone() for a in net.arch_parameters()]
            alphas[which][e, i] += sign * h
            f = _unrolled_objective(net, train, val, bufs, alphas, create_graph=False)
            values.append(float(f.detach()))
        numeric = (values[0] - values[1]) / (2 * h)
        assert numeric == pytest.approx(float(approx[which][e, i]), rel=1e-4, abs=1e-9)

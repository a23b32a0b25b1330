"""PR-DARTS second order (``order=2``) and the saturated-regulariser warning.

The hypergradient check mirrors test_unrolled_gradient.py (DARTS): the reference is the
exact derivative of PR-DARTS's unrolled architecture objective

    f(beta) = CE_val(w - xi * (grad_w CE_train(w, beta) + wd * w), beta) + R(beta),

each CE under one fixed gate draw (noise and op selection, as the strategy holds them),
computed by second-order autograd and by central differences of ``f``, in float64 with
the difference step scaled down (``unrolled_eps=1e-5``).
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

from nasforge.run.builtin_datasets import load_digits
from nasforge_darts.bilevel_search import StepContext
from nasforge_darts.prdarts_config import prdarts_config
from nasforge_darts.prdarts_strategy import (
    PRDartsStrategy,
    regulariser,
    regulariser_gradient_onset,
    saturation_warning,
)
from nasforge_darts.search_network import SearchNetwork
from nasforge_darts.space import DartsSpace
from nasforge_darts.supernet_view import SupernetView

XI, WD, TAU = 0.05, 3e-4, 0.5


@pytest.fixture()
def setup() -> tuple:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = SearchNetwork(C=2, layers=3, in_channels=1, num_classes=3, arch_init_std=0.5).double()
    gen = torch.Generator().manual_seed(1)
    xt, yt = torch.randn(6, 1, 8, 8, generator=gen).double(), torch.randint(0, 3, (6,), generator=gen)
    xv, yv = torch.randn(6, 1, 8, 8, generator=gen).double(), torch.randint(0, 3, (6,), generator=gen)
    strat = PRDartsStrategy(preset="paper", order=2, unrolled_eps=1e-5, w_weight_decay=WD, progress=False)
    strat.active_config = strat.config
    strat.tau = TAU
    strat.exact_zero_sum, strat.gate_draws = 0.0, 0
    view = SupernetView(net, **strat.view_options())
    # a fresh SGD has no momentum buffer yet: the virtual step is w - xi * (grad + wd * w)
    w_opt = torch.optim.SGD(view.weight_parameters(), lr=XI, momentum=0.9, weight_decay=WD)
    return strat, view, (xt, yt), (xv, yv), w_opt


def _ctx(w_opt: torch.optim.Optimizer, seed: int = 7) -> StepContext:
    return StepContext(0, 10, XI, w_opt, torch.Generator().manual_seed(seed))


def _objective(strat, view, train, val, draws, betas, *, create_graph):  # noqa: ANN001, ANN202
    """f(beta) with the given (train, val) draws, through functional_call (no in-place steps)."""
    net = view.module
    names = [n for n, p in net.named_parameters() if not n.startswith("alphas")]
    w = [p for n, p in net.named_parameters() if not n.startswith("alphas")]
    train_draws, val_draws = draws
    lt = F.cross_entropy(
        functional_call(
            net,
            dict(zip(names, w, strict=True)),
            (train[0], strat._weights(betas, train_draws)),
            {"sparse": True},
        ),
        train[1],
    )
    g = torch.autograd.grad(lt, w, create_graph=create_graph, allow_unused=True)  # skipped ops: None
    w2 = [p - XI * (WD * p if gi is None else gi + WD * p) for p, gi in zip(w, g, strict=True)]
    lv = F.cross_entropy(
        functional_call(
            net,
            dict(zip(names, w2, strict=True)),
            (val[0], strat._weights(betas, val_draws)),
            {"sparse": True},
        ),
        val[1],
    )
    reg, _ = regulariser(view, betas, strat.tau, strat.cfg, [m for _, m in val_draws])
    return lv + reg


def _draws(strat, view, w_opt):  # noqa: ANN001, ANN202
    """The draws arch_gradient makes from the same generator state (train, then val)."""
    ctx = _ctx(w_opt)
    return strat._draw(view, ctx), strat._draw(view, ctx)


@pytest.mark.slow
def test_second_order_gradient_matches_the_exact_unrolled_objective(setup: tuple) -> None:
    strat, view, train, val, w_opt = setup
    before = [p.detach().clone() for p in view.module.parameters()]
    approx, info = strat.arch_gradient(view, train, val, _ctx(w_opt))
    assert all(torch.equal(a, b) for a, b in zip(before, view.module.parameters(), strict=True))  # restored
    assert info["grad_norm_reg"] > 0  # tau = 0.5: the regulariser has a gradient, and it is in
    draws = _draws(strat, view, w_opt)
    betas = view.arch_parameters()
    f = _objective(strat, view, train, val, draws, betas, create_graph=True)
    exact = torch.autograd.grad(f, betas)
    for a, e in zip(approx, exact, strict=True):
        assert torch.allclose(a, e, rtol=1e-6, atol=1e-9), (a - e).abs().max()
    # central differences of f itself, at entries where the gates are not clipped
    h = 1e-5
    pick = torch.Generator().manual_seed(2)
    checked = 0
    while checked < 4:
        which = int(torch.randint(0, 2, (1,), generator=pick))
        e, i = int(torch.randint(0, 14, (1,), generator=pick)), int(torch.randint(0, 8, (1,), generator=pick))
        if float(exact[which][e, i]) == 0.0:
            continue
        values = []
        for sign in (1.0, -1.0):
            shifted = [b.detach().clone() for b in betas]
            shifted[which][e, i] += sign * h
            values.append(
                float(_objective(strat, view, train, val, draws, shifted, create_graph=False).detach())
            )
        numeric = (values[0] - values[1]) / (2 * h)
        assert numeric == pytest.approx(float(approx[which][e, i]), rel=1e-4, abs=1e-9)
        checked += 1


@pytest.mark.slow
def test_second_order_differs_from_first_order_and_regulariser_is_included(setup: tuple) -> None:
    strat, view, train, val, w_opt = setup
    second, _ = strat.arch_gradient(view, train, val, _ctx(w_opt))
    draws = _draws(strat, view, w_opt)
    betas = view.arch_parameters()
    # without the regulariser the gradient is off by exactly its gradient
    reg, _ = regulariser(view, betas, strat.tau, strat.cfg, [m for _, m in draws[1]])
    g_reg = torch.autograd.grad(reg, betas)
    f = _objective(strat, view, train, val, draws, betas, create_graph=True)
    exact = torch.autograd.grad(f, betas)
    for s, e, r in zip(second, exact, g_reg, strict=True):
        assert torch.allclose(s - r, e - r, rtol=1e-6, atol=1e-9)
        assert float(r.abs().max()) > 1e-6
    # the unroll matters: first order on the same validation draw is measurably different
    weights = strat._weights(betas, draws[1])
    ce = F.cross_entropy(view.forward(val[0], weights), val[1])
    first = [g + r for g, r in zip(torch.autograd.grad(ce, betas), g_reg, strict=True)]
    assert any(not torch.allclose(f1, s, rtol=1e-2, atol=1e-6) for f1, s in zip(first, second, strict=True))


def _tiny_fit(**options: object) -> tuple:
    space = DartsSpace()
    settings: dict = {
        "epochs": 2,
        "max_batches": 2,
        "batch_size": 16,
        "supernet": {"C": 2},
        "darts_layers": 3,
    }
    strat = PRDartsStrategy(preset="paper", seed=3, progress=False, **{**settings, **options})
    out = strat.fit(space, load_digits())
    return space.format(out.best), out.produced_by["arch_parameters"]


@pytest.mark.slow
def test_second_order_search_is_seeded_and_not_first_order() -> None:
    torch.set_num_threads(1)
    g2, a2 = _tiny_fit(order=2, tau_max=1.0)
    assert _tiny_fit(order=2, tau_max=1.0) == (g2, a2)  # same seed, same process: bit-identical
    _, a1 = _tiny_fit(order=1, tau_max=1.0)
    assert a1 != a2


def _betas() -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [1e-3 * torch.randn(14, 8, generator=gen) for _ in range(2)]


def test_tau_ten_regulariser_gradient_is_exactly_zero_in_float32() -> None:
    cfg = prdarts_config("paper")
    onset = regulariser_gradient_onset(_betas(), cfg, 200)
    assert onset is not None and onset > 0  # zero at the start, and for a third of the run
    # the closed form: sigmoid(beta + 2.3979 tau) rounds to 1 in float32 for tau >= ~7.2
    tau_onset = 10 - 9.9 * onset / 199
    assert 6.5 < tau_onset < 7.3
    assert regulariser_gradient_onset([b.double() for b in _betas()], cfg, 200) == 0
    assert regulariser_gradient_onset(_betas(), prdarts_config("official-code"), 200) == 0
    message = saturation_warning(_betas(), cfg, 200)
    assert message is not None
    assert "exactly 0 in float32 at the start" in message
    assert f"from epoch {onset} of 200" in message
    assert saturation_warning(_betas(), prdarts_config("official-code"), 200) is None
    never = saturation_warning(_betas(), prdarts_config("paper", tau_min=9.0), 200)
    assert never is not None and "for all 200 epochs" in never


@pytest.mark.slow
def test_the_paper_preset_warns_once_per_run(caplog: pytest.LogCaptureFixture) -> None:
    torch.set_num_threads(1)
    with caplog.at_level(logging.WARNING, logger="nasforge.darts"):
        _tiny_fit(epochs=3, max_batches=1, tau_min=9.0)  # tau 10 -> 9: zero throughout
    warned = [r for r in caplog.records if "regularisers' gradient is exactly 0" in r.getMessage()]
    assert len(warned) == 1
    assert "for all 3 epochs" in warned[0].getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="nasforge.darts"):
        _tiny_fit(epochs=1, max_batches=1, tau_max=1.0)
    assert not [r for r in caplog.records if "gradient is exactly 0" in r.getMessage()]

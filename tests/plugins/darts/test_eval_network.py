"""Evaluation network: the published cells give the papers' parameter and mult-add counts."""

from __future__ import annotations

import pytest
import torch

from nasforge_darts.counting import count_mult_adds, count_parameters
from nasforge_darts.drop_path import drop_path
from nasforge_darts.eval_config import EvalNetConfig
from nasforge_darts.published import DARTS_V2, PR_DARTS
from nasforge_darts.space import DartsSpace

SPACE = DartsSpace()


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.mark.slow
def test_pr_darts_cifar10_parameters_match_paper() -> None:
    net = SPACE.build(SPACE.parse(PR_DARTS))  # C=36, 20 cells, auxiliary head built
    n = count_parameters(net)
    assert n == 3_444_814  # 3.445M; the paper's Table 1 prints 3.4M
    assert round(n / 1e6, 1) == 3.4
    # the convention: the auxiliary tower exists but is not counted
    assert count_parameters(net, exclude=()) > n


@pytest.mark.slow
def test_darts_v2_cifar10_parameters_match_paper() -> None:
    n = count_parameters(SPACE.build(SPACE.parse(DARTS_V2), auxiliary=False))
    assert n == 3_349_342 and round(n / 1e6, 1) == 3.3


def test_pr_darts_imagenet_parameters_and_mult_adds_match_paper() -> None:
    net = SPACE.build(SPACE.parse(PR_DARTS), dataset="imagenet")
    assert (net.cfg.C, net.cfg.layers, net.cfg.num_classes) == (48, 14, 1000)
    n = count_parameters(net)
    assert round(n / 1e6, 2) == 4.98  # Table 2: 4.98M
    macs = count_mult_adds(net, (3, 224, 224))
    assert round(macs / 1e6) == 543  # Table 2: 543M
    assert net.training  # the counter restores the mode


@pytest.mark.slow
def test_darts_v2_imagenet_parameters_match_paper() -> None:
    n = count_parameters(SPACE.build(SPACE.parse(DARTS_V2), dataset="imagenet"))
    assert round(n / 1e6, 1) == 4.7


@pytest.mark.slow
def test_cifar_mult_adds_of_the_published_cells() -> None:
    # research note [M]: 530M (PR-DARTS) and 528M (DARTS_V2) at 32x32
    assert round(count_mult_adds(SPACE.build(SPACE.parse(PR_DARTS)), (3, 32, 32)) / 1e6) == 530
    assert round(count_mult_adds(SPACE.build(SPACE.parse(DARTS_V2)), (3, 32, 32)) / 1e6) == 528


@pytest.mark.slow
def test_small_network_trains_with_aux_and_drop_path_on_digit_sized_input() -> None:
    torch.manual_seed(0)
    net = SPACE.build(SPACE.parse(PR_DARTS), C=8, layers=5, in_channels=1, auxiliary=True, drop_path=0.2)
    x = torch.randn(4, 1, 8, 8)
    logits, aux = net.forward_with_aux(x)
    assert logits.shape == (4, 10) and aux is not None and aux.shape == (4, 10)
    (logits.logsumexp(1).mean() + aux.logsumexp(1).mean()).backward()
    assert all(p.grad is not None for p in net.cells.parameters() if p.requires_grad)
    net.eval()
    out1, aux_eval = net.forward_with_aux(x)
    assert aux_eval is None and torch.equal(out1, net(x))  # no drop-path at inference


def test_imagenet_stem_and_aux_head_shapes() -> None:
    torch.manual_seed(0)
    net = SPACE.build(SPACE.parse(DARTS_V2), dataset="imagenet", C=8, layers=3, num_classes=7)
    logits, aux = net.forward_with_aux(torch.randn(2, 3, 224, 224))
    assert logits.shape == (2, 7) and aux is not None and aux.shape == (2, 7)


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        EvalNetConfig.create(dataset="mnist")
    with pytest.raises(ValueError):
        EvalNetConfig.create(C=7)
    with pytest.raises(TypeError):
        EvalNetConfig.create(widht=16)
    assert EvalNetConfig.create(layers=20).reduction_cells == (6, 13)  # 7th and 14th cells
    assert EvalNetConfig.create(dataset="imagenet").reduction_cells == (4, 9)


def test_drop_path_keeps_the_expectation_and_drops_whole_samples() -> None:
    torch.manual_seed(0)
    x = torch.ones(20_000, 2, 3, 3)
    y = drop_path(x, 0.3)
    per_sample = y.flatten(1)
    assert torch.all((per_sample == 0).all(1) | (per_sample == per_sample[:, :1]).all(1))
    assert abs(y.mean().item() - 1.0) < 0.02
    assert drop_path(x, 0.0) is x
    with pytest.raises(ValueError):
        drop_path(x, 1.0)


def test_factorized_reduce_matches_the_darts_shift_and_handles_odd_sizes() -> None:
    from nasforge_darts.ops import FactorizedReduce

    torch.manual_seed(0)
    f = FactorizedReduce(4, 8)
    x = torch.randn(2, 4, 8, 8)
    r = torch.relu(x)
    ref = f.bn(torch.cat([f.conv_a(r), f.conv_b(r[:, :, 1:, 1:])], dim=1))
    assert torch.allclose(f(x), ref)
    assert f(torch.randn(2, 4, 7, 7)).shape == (2, 8, 4, 4)
    assert f(torch.randn(2, 4, 1, 1)).shape == (2, 8, 1, 1)

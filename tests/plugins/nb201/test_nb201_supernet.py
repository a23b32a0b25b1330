"""The weight-sharing supernet: explicit alphas, caller-supplied edge weights, derivation."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge_nb201 import NB201Space, supernet
from nasforge_nb201.supernet import MixedOp

GOOD = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def tiny():
    torch.manual_seed(0)
    return supernet(C=4, N=1, num_classes=10, in_channels=1)


@pytest.fixture
def x() -> torch.Tensor:
    return torch.randn(4, 1, 8, 8, generator=torch.Generator().manual_seed(1))


def test_arch_and_weight_parameters_partition_the_parameters(tiny) -> None:
    (alphas,) = tiny.arch_parameters()
    assert alphas is tiny.alphas and alphas.shape == (6, 5) and alphas.requires_grad
    weights = list(tiny.weight_parameters())
    assert all(p is not alphas for p in weights)
    assert {id(p) for p in weights} | {id(alphas)} == {id(p) for p in tiny.parameters()}
    assert len(weights) + 1 == len(list(tiny.parameters()))


def test_every_edge_of_every_cell_holds_all_five_ops(tiny) -> None:
    mixed = [m for m in tiny.modules() if isinstance(m, MixedOp)]
    assert len(mixed) == 3 * 1 * 6
    assert all(len(m.ops) == 5 for m in mixed)


def test_default_forward_is_softmax_of_alphas(tiny, x) -> None:
    tiny.eval()
    with torch.no_grad():
        a = tiny(x)
        b = tiny(x, torch.softmax(tiny.alphas, dim=-1))
    assert a.shape == (4, 10)
    torch.testing.assert_close(a, b)


def test_darts_step_updates_only_what_each_optimiser_owns(tiny, x) -> None:
    y = torch.arange(4) % 10
    w_opt = torch.optim.SGD(tiny.weight_parameters(), lr=0.1)
    a_opt = torch.optim.Adam(tiny.arch_parameters(), lr=0.1)
    alphas_before = tiny.alphas.detach().clone()
    F.cross_entropy(tiny(x), y).backward()
    assert tiny.alphas.grad is not None and tiny.alphas.grad.abs().sum() > 0
    w_opt.step()
    assert torch.equal(tiny.alphas.detach(), alphas_before)
    a_opt.step()
    assert not torch.equal(tiny.alphas.detach(), alphas_before)


def test_genotype_is_the_per_edge_argmax(tiny) -> None:
    space = NB201Space()
    target = space.parse(GOOD)
    with torch.no_grad():
        tiny.alphas.copy_(3.0 * tiny.one_hot(target) + 0.01 * torch.randn(6, 5))
    g = tiny.genotype()
    assert isinstance(g, Genotype) and g == target
    space.validate(g)
    gates = torch.zeros(6, 5)
    gates[:, 1] = 1.0
    assert tiny.genotype(gates).choices == ("skip_connect",) * 6


def test_initial_alphas_are_small_and_seeded() -> None:
    torch.manual_seed(5)
    a = supernet(C=4, N=1).alphas.detach().clone()
    torch.manual_seed(5)
    b = supernet(C=4, N=1).alphas.detach()
    assert torch.equal(a, b)
    assert 0 < a.abs().max() < 0.01


def test_genotype_weights_run_a_single_path(tiny, x) -> None:
    """A Genotype (or one-hot weights without grad) skips every unselected op."""
    g = NB201Space().parse(GOOD)
    called: list[str] = []
    for name, m in tiny.named_modules():
        if isinstance(m, nn.Conv2d) and ".ops." in name:
            m.register_forward_hook(lambda mod, i, o, name=name: called.append(name))
    tiny(x, g)
    selected = {"0": "3", "1": "3", "2": "4", "3": "1", "4": "3", "5": "1"}  # edge -> op index
    for name in called:
        edge, op = name.split(".edges.")[1].split(".ops.")
        assert selected[edge] == op.split(".")[0], name
    assert called, "the selected conv ops must have run"


@pytest.mark.parametrize("affine", [False, True])
def test_inherited_network_matches_the_single_path(affine: bool) -> None:
    torch.manual_seed(0)
    sup = supernet(C=4, N=2, num_classes=10, in_channels=3, affine=affine)
    x = torch.randn(3, 3, 16, 16)
    sup.train()
    sup(x)  # give BN running stats something other than their initial values
    g = NB201Space().parse(GOOD)
    net = sup.inherit(g)
    sup.eval()
    net.eval()
    with torch.no_grad():
        torch.testing.assert_close(net(x), sup(x, g))


def test_straight_through_weights_reach_every_op_unless_sparse(tiny, x) -> None:
    """NASI needs gradients for unselected ops (dense); GDAS-style ``sparse`` skips them."""
    hard = F.one_hot(torch.tensor([3, 3, 4, 1, 3, 1]), 5).float()
    dense_w = hard.clone().requires_grad_(True)
    tiny(x, dense_w).sum().backward()
    sparse_w = hard.clone().requires_grad_(True)
    tiny(x, sparse_w, sparse=True).sum().backward()
    unselected = hard == 0
    assert (dense_w.grad[unselected] != 0).any()
    assert torch.all(sparse_w.grad[unselected] == 0)
    none_column = dense_w.grad[:, 0]
    assert torch.all(none_column == 0)  # the zero op contributes nothing, in any mode


def test_all_zero_weights_still_give_logits(tiny, x) -> None:
    out = tiny(x, torch.zeros(6, 5))
    assert out.shape == (4, 10) and torch.isfinite(out).all()


@pytest.mark.parametrize("bad", [torch.zeros(5, 6), torch.zeros(30), torch.zeros(6, 5, dtype=torch.long)])
def test_edge_weights_are_checked(tiny, x, bad) -> None:
    with pytest.raises(ValueError, match=r"edge weights must be"):
        tiny(x, bad)


def test_full_size_supernet_on_benchmark_input() -> None:
    torch.manual_seed(0)
    sup = supernet()
    assert sup.config.C == 16 and sup.config.N == 5
    with torch.no_grad():
        out = sup.eval()(torch.randn(2, 3, 32, 32), sup.one_hot(sup.genotype()))
    assert out.shape == (2, 10)

"""The DARTS supernet: explicit architecture parameters, external edge weights, sparsity."""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.supernet_discretise import discretise
from nasforge_darts.cell_topology import TOPOLOGY
from nasforge_darts.primitives import PRIMITIVES, edge_index
from nasforge_darts.search_network import SearchNetwork
from nasforge_darts.space import DartsSpace


@pytest.fixture()
def net() -> SearchNetwork:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    return DartsSpace().supernet(C=4, layers=3, in_channels=1, num_classes=5)


@pytest.mark.slow
def test_parameter_groups_are_disjoint_and_complete(net: SearchNetwork) -> None:
    arch = net.arch_parameters()
    assert [tuple(a.shape) for a in arch] == [(14, 8), (14, 8)]
    weights = net.weight_parameters()
    ids = {id(p) for p in weights}
    assert not ids & {id(a) for a in arch}
    assert len(weights) + 2 == len(list(net.parameters()))


@pytest.mark.slow
def test_default_forward_is_softmax_of_alphas_and_reaches_alphas(net: SearchNetwork) -> None:
    x = torch.randn(4, 1, 8, 8)
    out = net(x)
    assert out.shape == (4, 5)
    assert torch.allclose(out, net(x, net.edge_weights()))
    out.sum().backward()
    assert net.alphas_normal.grad is not None and net.alphas_normal.grad.abs().sum() > 0


def test_external_weights_are_used_and_zero_weight_ops_are_not_run(net: SearchNetwork) -> None:
    calls: list[str] = []
    for cell in net.cells:
        for edge in cell.edges:
            for name, op in zip(PRIMITIVES, edge.ops, strict=True):
                op.register_forward_hook(lambda *_a, name=name: calls.append(name))
    w = torch.zeros(14, 8)
    w[:, PRIMITIVES.index("sep_conv_3x3")] = 1.0
    w[:, PRIMITIVES.index("none")] = 0.7  # the zero op never runs: it computes nothing
    out = net(torch.randn(2, 1, 8, 8), [w, w.clone()])
    assert out.shape == (2, 5)
    assert set(calls) == {"sep_conv_3x3"} and len(calls) == 3 * 14
    with pytest.raises(ValueError):
        net(torch.randn(2, 1, 8, 8), [torch.ones(6, 5), w])


def test_all_zero_weights_give_zero_nodes(net: SearchNetwork) -> None:
    z = torch.zeros(14, 8)
    out = net(torch.randn(3, 1, 8, 8), [z, z])
    assert torch.isfinite(out).all()
    # every node is zero, so the logits are the classifier bias alone
    assert torch.allclose(out, net.classifier.bias.expand(3, -1))


def test_derive_cell_top2_rule() -> None:
    scores = torch.zeros(14, 8)
    col = {n: i for i, n in enumerate(PRIMITIVES)}
    scores[edge_index(0, 2), col["sep_conv_3x3"]] = 0.9
    scores[edge_index(1, 2), col["skip_connect"]] = 0.5
    scores[edge_index(1, 2), col["none"]] = 0.99  # 'none' never counts
    scores[edge_index(2, 3), col["dil_conv_5x5"]] = 0.8
    scores[edge_index(2, 3), col["max_pool_3x3"]] = 0.7  # same source: second best
    scores[edge_index(0, 3), col["avg_pool_3x3"]] = 0.6
    normal = TOPOLOGY[0]

    def pairs(**options: object) -> list[tuple[str, int]]:
        return [(e.op, e.source) for e in discretise(normal, scores, **options)]

    cell = pairs()
    assert cell[:4] == [("sep_conv_3x3", 0), ("skip_connect", 1), ("dil_conv_5x5", 2), ("avg_pool_3x3", 0)]
    literal = pairs(distinct_sources=False)
    assert literal[2:4] == [("dil_conv_5x5", 2), ("max_pool_3x3", 2)]  # one source twice
    with pytest.raises(ValueError):
        discretise(normal, torch.zeros(14, 5))

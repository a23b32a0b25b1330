"""The NAS-Bench-201 network stack: K networks as one module of grouped convolutions.

Each network's output is its own network's (float64, to rounding), from the weights packed
in from that network; an edge picks each network's op by selection, so a non-finite
value of an op a network does not use never reaches it; the space declares the capability.
"""

from __future__ import annotations

import pytest
import torch

from nasforge import get_registry
from nasforge.kernel.search_space import STACK
from nasforge.tools.scoring import build_model
from nasforge_nb201.stack import NB201Stack, StackedNB201

TINY = {"C": 4, "N": 1}
CELLS = [
    "|nor_conv_3x3~0|+|none~0|skip_connect~1|+|nor_conv_1x1~0|avg_pool_3x3~1|nor_conv_3x3~2|",
    "|skip_connect~0|+|nor_conv_1x1~0|none~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|",
]


def _stacked(dtype=torch.float64, build=TINY):
    space = get_registry().space("nb201")
    gs = [space.parse(c) for c in CELLS]
    nets = [build_model(space, g, seed=3 + i, build=build).train() for i, g in enumerate(gs)]
    stack = space.network_stack(len(gs), dtype=dtype, **build)
    arena = torch.zeros(stack.nbytes, dtype=torch.uint8)
    for i, (g, net) in enumerate(zip(gs, nets, strict=True)):
        stack.pack(i, g, net, arena)
    module = stack.module(arena)
    stack.arrange(module, gs)
    return gs, nets, stack, arena, module


def test_the_space_declares_stacks():
    space = get_registry().space("nb201")
    assert STACK in space.capabilities
    assert isinstance(space.network_stack(3, **TINY), NB201Stack)
    with pytest.raises(Exception, match="width"):
        space.network_stack(2, width=3)


@pytest.mark.slow
@pytest.mark.parametrize("build", [TINY, {"C": 3, "N": 2, "num_classes": 7, "in_channels": 1}])
def test_each_network_of_the_stack_computes_its_own_output(build):
    torch.set_num_threads(1)
    gs, nets, _, _, module = _stacked(build=build)
    assert isinstance(module, StackedNB201) and module.training
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(5, build.get("in_channels", 3), 8, 8, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        out = module(x[:, None].expand(5, len(gs), *x.shape[1:]))
        for k, net in enumerate(nets):
            torch.testing.assert_close(out[:, k], net.double()(x), rtol=1e-10, atol=1e-12)


def test_an_unused_ops_non_finite_values_never_reach_a_network():
    """Weights of a conv slot network 0 does not use, set to inf/nan: its output unchanged."""
    gs, nets, stack, arena, module = _stacked()
    x = torch.randn(4, 3, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    xs = x[:, None].expand(4, len(gs), *x.shape[1:])
    with torch.no_grad():
        before = module(xs)
        # edge 1 of network 0 is `none`: both conv slots unused there
        edge = module.cells()[0].edges[1]
        edge.conv3.weight.view(len(gs), -1)[0].fill_(float("inf"))
        edge.conv1.weight.view(len(gs), -1)[0].fill_(float("nan"))
        after = module(xs)
    assert torch.equal(before[:, 0], after[:, 0]) and torch.isfinite(after[:, 0]).all()


def test_gradients_of_each_network_are_its_own():
    """The backward of the summed losses gives each network the gradient of its own loss."""
    gs, nets, _, _, module = _stacked()
    x = torch.randn(6, 3, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    y = torch.arange(6) % 10
    out = module(x[:, None].expand(6, len(gs), *x.shape[1:]))
    loss = sum(torch.nn.functional.cross_entropy(out[:, k], y) for k in range(len(gs)))
    loss.backward()
    for k, net in enumerate(nets):
        net = net.double()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        mine = module.stem[0].weight.grad.view(len(gs), -1)[k]
        torch.testing.assert_close(mine, net.stem[0].weight.grad.reshape(-1), rtol=1e-9, atol=1e-12)
        mine = module.classifier.weight.grad.view(len(gs), -1)[k]
        torch.testing.assert_close(mine, net.classifier.weight.grad.reshape(-1), rtol=1e-9, atol=1e-12)


def test_a_cell_of_the_wrong_size_is_refused():
    gs, _, stack, arena, module = _stacked()
    with pytest.raises(ValueError, match="2 networks"):
        stack.arrange(module, gs[:1])
    with pytest.raises(ValueError, match="not in a stack"):
        stack.module(arena, 1, 2)

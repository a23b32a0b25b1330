"""mlp-res's supernet, derived from its declaration: one cell of activations and one of skip
bits, each layer mixed on its own over one shared linear map per layer (no copy of the
network per choice), computing Eigen-NAS's relaxation exactly."""

from __future__ import annotations

import torch

from nasforge_eigennas import ACTIVATIONS, MLPResSpace
from nasforge_eigennas.activations import DEFAULT_ACTIVATIONS


def test_two_cells_activation_and_skip_with_the_zero_and_skip_roles() -> None:
    act, skip = MLPResSpace(depth=5).supernet(width=8).topology
    assert (act.name, act.ops.names, act.shape, act.ops.zero) == ("activation", ACTIVATIONS, (4, 5), None)
    assert (skip.name, skip.ops.names, skip.shape) == ("skip", ("0", "1"), (3, 2))
    assert (skip.ops.zero, skip.ops.skip) == ("0", "1")


def test_the_supernet_holds_one_network_of_weights() -> None:
    space = MLPResSpace(depth=5)
    supernet = space.supernet(width=8)
    built = space.build(space.parse("relu|tanh+skip|swish|sigmoid+skip"), width=8)
    shapes = sorted(tuple(p.shape) for p in supernet.weight_parameters())
    assert shapes == sorted(tuple(p.shape) for p in built.parameters())


def test_each_layer_is_the_papers_mixture_of_activations_plus_a_weighted_skip() -> None:
    """Node l = sum_k w[l, k] sigma_k(c_l W_l f_{l-1}) + w_skip[l, skip] f_{l-1} (Eigen-NAS,
    searched "independently"), the skip's zero op computing nothing."""
    torch.manual_seed(0)
    space = MLPResSpace(depth=4)
    supernet = space.supernet(width=8)
    x = torch.randn(3, 1, 8, 8)
    w_act, w_skip = (torch.softmax(torch.randn(cell.shape), dim=-1) for cell in supernet.topology)
    trunk = supernet.network.trunk
    fns = [DEFAULT_ACTIVATIONS.torch_fn(a) for a in ACTIVATIONS]
    f = trunk.adapter(x)
    for layer in range(1, 4):
        h = trunk.linear(layer, f)
        node = w_act[layer - 1, 0] * fns[0](h)
        for k in range(1, len(ACTIVATIONS)):
            node = node + w_act[layer - 1, k] * fns[k](h)
        f = node + w_skip[layer - 2, 1] * f if layer >= 2 else node
    with torch.no_grad():
        assert torch.equal(supernet(x, [w_act, w_skip]), trunk.output(f))

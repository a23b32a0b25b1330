"""Kernel presets, the new parameter sets and the decomposed (HNAS-code) Jacobian."""

from __future__ import annotations

import pytest
import torch
from backend_nets import small_batch, small_cnn

from nasforge.tools.backends import (
    PRESETS,
    KernelSpec,
    empirical_ntk,
    jacobian,
    kernel_preset,
    preset_name,
    split_parameters,
)


def test_param_sets_pick_the_papers_parameters() -> None:
    model = small_cnn()
    named, _ = split_parameters(model, "named_weight")
    assert list(named) == ["0.weight", "1.weight", "3.weight", "4.weight", "8.weight"]  # BN weights too
    layers, _ = split_parameters(model, "layers")
    assert list(layers) == ["0.weight", "0.bias", "3.weight", "8.weight", "8.bias"]  # no BN parameter


def test_decomposed_rows_sum_to_the_batch_gradient() -> None:
    model = small_cnn().double()
    x, y = small_batch()
    rows = jacobian(model, x.double(), y, spec=KernelSpec(output="target", bn="decomposed", params="layers"))
    live, _ = split_parameters(model, "layers")
    params = dict(model.named_parameters())
    total = model(x.double()).gather(1, y[:, None]).sum()
    grads = torch.autograd.grad(total, [params[n] for n in live])
    assert torch.allclose(rows.sum(0), torch.cat([g.reshape(-1) for g in grads]), rtol=1e-10, atol=1e-12)


def test_decomposed_rows_are_exact_without_batch_coupling() -> None:
    """With no train-mode BatchNorm a layer's share for sample i is sample i's gradient."""
    model = small_cnn(bn=False).double()
    x, y = small_batch()
    for output in ("sum", "target", "loss"):
        decomposed = KernelSpec(output=output, bn="decomposed", params="layers")
        shares = jacobian(model, x.double(), y, spec=decomposed)
        exact = jacobian(model, x.double(), y, spec=KernelSpec(output=output, bn="sample", params="layers"))
        assert torch.allclose(shares, exact, rtol=1e-10, atol=1e-12), output


def test_decomposed_differs_from_the_exact_coupled_jacobian_with_bn() -> None:
    model = small_cnn()
    x, y = small_batch()
    shares = empirical_ntk(model, x, y, spec=kernel_preset("hnas-code"))
    exact = empirical_ntk(model, x, y, spec=KernelSpec(output="target", bn="batch", params="layers"))
    assert not torch.allclose(shares, exact, rtol=1e-2)


def test_decomposed_leaves_the_model_as_it_was() -> None:
    model = small_cnn()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    hooks = sum(len(m._forward_hooks) for m in model.modules())
    jacobian(model, *small_batch(), spec=kernel_preset("hnas-code"))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert sum(len(m._forward_hooks) for m in model.modules()) == hooks
    assert all(p.grad is None for p in model.parameters())


class WithUnusedLayer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = small_cnn()
        self.unused = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def test_a_layer_that_never_runs_contributes_zeros() -> None:
    model = WithUnusedLayer()
    jac = jacobian(model, *small_batch(), spec=kernel_preset("hnas-code"))
    assert jac.shape[1] == sum(t.numel() for t in split_parameters(model, "layers")[0].values())
    assert torch.count_nonzero(jac[:, -12:]) == 0


def test_presets_and_their_names() -> None:
    assert set(PRESETS) == {"tenas", "hnas-code", "per-sample"}
    for name, spec in PRESETS.items():
        assert kernel_preset(name) == spec
        assert preset_name(spec) == name
        assert preset_name(KernelSpec(spec.output, spec.bn, spec.params, method="jvp")) == name
    assert preset_name(KernelSpec(output="full")) is None
    with pytest.raises(ValueError, match="unknown kernel preset"):
        kernel_preset("eigen-nas")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bn": "decomposed", "params": "all"}, "takes params 'weights' or 'layers'"),
        ({"bn": "decomposed", "params": "layers", "output": "full"}, "not 'full'"),
        ({"params": "everything"}, "params"),
    ],
)
def test_bad_specs_fail_in_one_line(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        KernelSpec(**kwargs)
    assert "\n" not in str(err.value)

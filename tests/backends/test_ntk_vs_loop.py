"""The torch.func NTK must equal a plain per-sample autograd loop (issue 3, must show)."""

from __future__ import annotations

import pytest
import torch
from backend_nets import small_batch, small_cnn
from torch import nn

from nasforge.tools.backends import KernelSpec, batch_norm_mode, empirical_ntk, per_sample_head, spectrum


def loop_ntk(model: nn.Module, x: torch.Tensor, y: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """The reference: one autograd.grad per output row, no torch.func anywhere."""
    params = [p for p in model.parameters() if p.requires_grad]
    rows: list[torch.Tensor] = []
    with batch_norm_mode(model, spec.bn):
        if spec.bn == "batch":
            logits = model(x)
            outs = [per_sample_head(logits[i], y[i], spec.output) for i in range(len(x))]
        else:
            outs = [per_sample_head(model(x[i : i + 1])[0], y[i], spec.output) for i in range(len(x))]
        for out in outs:
            for scalar in out.reshape(-1):
                grads = torch.autograd.grad(scalar, params, retain_graph=True, allow_unused=True)
                flat = [
                    (g if g is not None else torch.zeros_like(p)).reshape(-1)
                    for g, p in zip(grads, params, strict=True)
                ]
                rows.append(torch.cat(flat).double())
    jac = torch.stack(rows)
    return jac @ jac.T


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


@pytest.mark.parametrize("bn", ["sample", "batch", "eval"])
@pytest.mark.parametrize("output", ["sum", "target", "loss", "full"])
@pytest.mark.parametrize("method", ["jacrev", "jvp"])
def test_ntk_equals_explicit_loop(bn: str, output: str, method: str) -> None:
    model = small_cnn()
    x, y = small_batch()
    spec = KernelSpec(output=output, bn=bn, method=method)
    fast = empirical_ntk(model, x, y, spec=spec, chunk_size=4)
    ref = loop_ntk(model, x, y, spec)
    assert fast.shape == ref.shape
    assert rel(fast, ref) < 1e-5
    s_fast, s_ref = spectrum(fast), spectrum(ref)
    assert s_fast.lambda_min == pytest.approx(s_ref.lambda_min, rel=1e-4)
    assert s_fast.lambda_max == pytest.approx(s_ref.lambda_max, rel=1e-5)
    assert s_fast.condition == pytest.approx(s_ref.condition, rel=1e-4)
    assert s_fast.trace == pytest.approx(s_ref.trace, rel=1e-5)


def test_ntk_is_chunk_size_invariant() -> None:
    model = small_cnn()
    x, y = small_batch(n=7)
    ref = empirical_ntk(model, x, y, chunk_size=64)
    for chunk in (1, 3):
        assert rel(empirical_ntk(model, x, y, chunk_size=chunk), ref) < 1e-6


def test_weights_only_is_a_smaller_kernel() -> None:
    """Dropping parameters removes PSD terms, so the trace can only shrink."""
    model = small_cnn()
    x, y = small_batch()
    full = empirical_ntk(model, x, y, spec=KernelSpec(params="all"))
    part = empirical_ntk(model, x, y, spec=KernelSpec(params="weights"))
    assert float(part.trace()) < float(full.trace())


def test_model_state_is_restored() -> None:
    model = small_cnn()
    model.train()
    bn = model[1]
    mean_before = bn.running_mean.clone()
    x, y = small_batch()
    empirical_ntk(model, x, y, spec=KernelSpec(bn="batch"))
    empirical_ntk(model, x, y, spec=KernelSpec(bn="eval"))
    assert bn.training and bn.track_running_stats
    assert torch.equal(bn.running_mean, mean_before)


def test_labels_required_for_target_output() -> None:
    model = small_cnn()
    x, _ = small_batch()
    with pytest.raises(ValueError, match="needs targets"):
        empirical_ntk(model, x, None, spec=KernelSpec(output="target"))
    # label-free outputs need none
    assert empirical_ntk(model, x, None).shape == (6, 6)


def test_float64_model_gives_exact_agreement() -> None:
    model = small_cnn().double()
    x, y = small_batch()
    x = x.double()
    spec = KernelSpec(output="sum", bn="batch")
    assert rel(empirical_ntk(model, x, y, spec=spec), loop_ntk(model, x, y, spec)) < 1e-12


@pytest.mark.parametrize("bn", ["sample", "eval"])
def test_joint_kernels_equal_separate_ones(bn: str) -> None:
    from nasforge.tools.backends import empirical_ntks, joint_jacobians

    model = small_cnn()
    x, y = small_batch(n=5)
    specs = [KernelSpec(output=o, bn=bn) for o in ("sum", "loss", "target")]
    joint = joint_jacobians(model, x, y, specs=specs, chunk_size=2)
    for spec, jac in zip(specs, joint, strict=True):
        alone = empirical_ntk(model, x, y, spec=spec)
        assert rel(jac.double() @ jac.double().T, alone) < 1e-6
    mixed = specs + [KernelSpec(output="sum", bn=bn, method="jvp")]
    kernels = empirical_ntks(model, x, y, specs=mixed)
    assert rel(kernels[-1], kernels[0]) < 1e-5

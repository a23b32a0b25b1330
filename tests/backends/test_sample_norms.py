"""Per-sample gradient norms equal the materialised Jacobian's squared rows (float64, CPU).

The reference is the per-cell definition the NTK metrics used before: ``jacobian`` (each
sample forwarded alone under torch.func, or the coupled batch for ``bn="batch"``, or the
HNAS code's per-layer shares for ``bn="decomposed"``), then its squared row norms and the
squared norm of its summed rows. The networks hold every case the identities have to get
right: Conv (grouped, strided, dilated, 'same' and reflect padding, 1-d), Linear on a
sequence (extra dims), BatchNorm (affine or not, running statistics or not), a layer called
twice, parameters tied across two modules, a parameter that is never used and a layer
whose output does not reach the logits, a module without an identity (LayerNorm), a module
that couples the samples, and an output modified in place.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.tools.backends import (
    KernelSpec,
    jacobian,
    joint_sample_grad_norms,
    sample_grad_norms,
    sample_norms,
)
from nasforge.tools.backends.chunking import map_chunks

CLASSES = 4


class Twice(nn.Module):
    """Conv called twice, grouped strided conv, pooling, a sequence Linear, LayerNorm, an unused
    Linear and a conv whose output is dropped."""

    def __init__(self, affine: bool = True) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(3)
        self.grouped = nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3, bias=False)
        self.bn2 = nn.BatchNorm2d(6, affine=affine)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.dead = nn.Conv2d(6, 6, 1)
        self.norm = nn.LayerNorm(6)
        self.tokens = nn.Linear(6, 5)
        self.head = nn.Linear(5, CLASSES)
        self.unused = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv(x)))
        x = F.relu(self.conv(x))  # the same weights again
        x = self.pool(F.relu(self.bn2(self.grouped(x))))
        self.dead(x)  # runs, reaches nothing
        t = self.norm(x.flatten(2).transpose(1, 2))  # (n, positions, 6)
        return self.head(self.tokens(t).mean(1))


class Signal(nn.Module):
    """1-d convs: dilated 'same' padding, reflect padding with stride; tied Linear weights."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv1d(2, 4, 3, padding="same", dilation=2)
        self.bn = nn.BatchNorm1d(4)
        self.b = nn.Conv1d(4, 4, 3, stride=2, padding=1, padding_mode="reflect")
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc2.weight = self.fc1.weight  # tied: one parameter, two modules
        self.head = nn.Linear(16, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.b(F.relu(self.bn(self.a(x)))).flatten(1)
        return self.head(torch.tanh(self.fc2(torch.tanh(self.fc1(h)))))


class Coupled(nn.Module):
    """Subtracts the batch mean: forwarding samples together is not forwarding them alone."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Linear(4, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.conv(x))
        h = h - h.mean(0, keepdim=True) + h
        return self.head(h.mean((2, 3)))


class InPlace(nn.Module):
    """A conv output changed in place (ReLU(inplace=True)) after the conv returned it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.relu(self.conv(x), inplace=True)
        return self.head(self.bn(h).mean((2, 3)))


def _net(cls: type[nn.Module], seed: int = 0, **kw: object) -> nn.Module:
    torch.manual_seed(seed)
    model = cls(**kw).double()
    for m in model.modules():  # running statistics that are not an identity, for bn="eval"
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model


def _batch(
    n: int = 5, shape: tuple[int, ...] = (3, 6, 6), seed: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, *shape, generator=gen, dtype=torch.float64), torch.randint(
        0, CLASSES, (n,), generator=gen
    )


def _reference(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, spec: KernelSpec
) -> tuple[torch.Tensor, float]:
    jac = jacobian(model, x, y, spec=spec, chunk_size=2).double()
    rows = jac.square().sum(1)
    if spec.output == "full":
        rows = rows.reshape(x.shape[0], -1)
    return rows, float(jac.sum(0).square().sum())


def _assert_equal(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, spec: KernelSpec, chunk: int = 3
) -> None:
    rows, total = _reference(model, x, y, spec)
    got = sample_grad_norms(model, x, y, spec=spec, chunk_size=chunk, totals=True)
    assert got.rows.dtype == torch.float64 and got.rows.shape == rows.shape
    assert torch.allclose(got.rows, rows, rtol=1e-6, atol=0), (got.rows, rows)
    assert got.total == pytest.approx(total, rel=1e-6)
    assert got.trace == pytest.approx(float(rows.sum()), rel=1e-6)


OUTPUTS = ["sum", "target", "full", "loss"]


@pytest.mark.slow
@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("bn", ["sample", "eval", "batch"])
@pytest.mark.parametrize("params", ["all", "weights", "named_weight"])
def test_norms_equal_the_jacobian(bn: str, output: str, params: str) -> None:
    torch.set_num_threads(1)
    model = _net(Twice)
    x, y = _batch()
    _assert_equal(model, x, y, KernelSpec(output=output, bn=bn, params=params))


@pytest.mark.parametrize("output", ["sum", "target", "loss"])
@pytest.mark.parametrize("params", ["weights", "layers"])
def test_decomposed_norms_equal_the_hnas_code_rows(output: str, params: str) -> None:
    torch.set_num_threads(1)
    model = _net(Twice)
    x, y = _batch()
    _assert_equal(model, x, y, KernelSpec(output=output, bn="decomposed", params=params))


@pytest.mark.slow
@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("bn", ["sample", "eval"])
def test_one_d_convs_and_tied_weights(bn: str, output: str) -> None:
    torch.set_num_threads(1)
    model = _net(Signal)
    x, y = _batch(shape=(2, 8))
    _assert_equal(model, x, y, KernelSpec(output=output, bn=bn))


@pytest.mark.parametrize("output", ["full", "loss"])
def test_batch_norm_without_affine_or_running_statistics(output: str) -> None:
    torch.set_num_threads(1)
    model = _net(Twice, affine=False)
    model.bn1.track_running_stats = False  # normalises by batch statistics even in eval mode
    model.bn1.running_mean = model.bn1.running_var = None
    x, y = _batch()
    for bn in ("sample", "eval"):
        _assert_equal(model, x, y, KernelSpec(output=output, bn=bn))


@pytest.mark.parametrize("cls", [Coupled, InPlace])
def test_a_network_the_batch_cannot_stand_for_takes_the_exact_path(
    cls: type[nn.Module], monkeypatch: pytest.MonkeyPatch
) -> None:
    torch.set_num_threads(1)
    model = _net(cls)
    x, y = _batch()
    exact = _spy(monkeypatch, "_exact_chunk")
    for output in ("full", "loss"):
        _assert_equal(model, x, y, KernelSpec(output=output, bn="sample"))
    assert exact  # the check caught it


def test_a_module_without_an_identity_takes_the_exact_path_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.set_num_threads(1)
    model = _net(Twice)
    x, y = _batch()
    exact, per_layer = _spy(monkeypatch, "_functional_grads"), _spy(monkeypatch, "layer_grads")
    _assert_equal(model, x, y, KernelSpec(output="full"))
    assert {name for call in exact for name in call[2]} == {"norm.weight", "norm.bias"}  # the LayerNorm
    assert per_layer


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[object, ...]]:
    calls: list[tuple[object, ...]] = []
    real = getattr(sample_norms, name)

    def spy(*args: object, **kw: object) -> object:
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(sample_norms, name, spy)
    return calls


def test_chunks_and_an_out_of_memory_split_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.set_num_threads(1)
    model = _net(Twice)
    x, y = _batch(n=7)
    spec = KernelSpec(output="full")
    whole = sample_grad_norms(model, x, y, spec=spec, chunk_size=64, totals=True)
    sizes: list[int] = []

    def small_device(fn, n, chunk_size, **kw):  # noqa: ANN001, ANN003, ANN202 - map_chunks' signature
        def limited(a: int, b: int):  # noqa: ANN202
            sizes.append(b - a)
            if b - a > 2:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return fn(a, b)

        return map_chunks(limited, n, chunk_size, **kw)

    monkeypatch.setattr("nasforge.tools.backends.sample_norms.map_chunks", small_device)
    split = sample_grad_norms(model, x, y, spec=spec, chunk_size=64, totals=True)
    assert sizes[:3] == [7, 3, 1]  # halved until it fits, then kept small
    assert torch.allclose(split.rows, whole.rows, rtol=1e-12)
    assert split.total == pytest.approx(whole.total, rel=1e-12)


def test_specs_sharing_a_forward_equal_each_alone() -> None:
    torch.set_num_threads(1)
    model = _net(Signal)  # every parameter has an identity: no exact path forwards
    x, y = _batch(shape=(2, 8))
    specs = [KernelSpec(output=o) for o in OUTPUTS] + [KernelSpec(output="sum", bn="eval")]
    forwards = []
    handle = model.head.register_forward_hook(lambda *_: forwards.append(1))
    joint = joint_sample_grad_norms(
        model, x, y, specs=specs, chunk_size=64, totals=[False, True, False, True, False]
    )
    handle.remove()
    # one batched forward per BatchNorm mode, plus the first sample alone each time (the check)
    assert len(forwards) == 4
    for spec, got in zip(specs, joint, strict=True):
        alone = sample_grad_norms(model, x, y, spec=spec, totals=True)
        assert torch.allclose(got.rows, alone.rows, rtol=1e-12)
    assert [j.total is None for j in joint] == [True, False, True, False, True]


def test_the_model_is_left_as_it_was() -> None:
    model = _net(Twice)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    modes = [m.training for m in model.modules()]
    x, y = _batch()
    joint_sample_grad_norms(
        model, x, y, specs=[KernelSpec(output="full"), KernelSpec(bn="decomposed", params="layers")]
    )
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert [m.training for m in model.modules()] == modes
    assert not any("forward" in vars(m) for m in model.modules())  # no patched forward left
    assert not any(m._forward_hooks for m in model.modules())


def test_labels_are_required_for_label_outputs() -> None:
    model = _net(Twice)
    x, _ = _batch()
    with pytest.raises(ValueError, match="needs targets"):
        sample_grad_norms(model, x, None, spec=KernelSpec(output="loss"))
    with pytest.raises(ValueError, match="flags"):
        joint_sample_grad_norms(model, x, None, specs=[KernelSpec()], totals=[True, False])


@pytest.mark.parametrize(("bn", "output"), [("sample", "full"), ("sample", "target"), ("decomposed", "sum")])
def test_cotangents_batched_in_one_backward_change_nothing(
    monkeypatch: pytest.MonkeyPatch, bn: str, output: str
) -> None:
    """The GPU's path (every cotangent of a chunk in one batched backward), forced on the CPU."""
    torch.set_num_threads(1)
    monkeypatch.setitem(sample_norms._COTANGENTS_PER_BACKWARD, "cpu", 64)
    for cls in (Twice, Signal):
        model = _net(cls)
        x, y = _batch(shape=(3, 6, 6) if cls is Twice else (2, 8))
        spec = KernelSpec(output=output, bn=bn, params="weights" if bn == "decomposed" else "all")
        if bn == "decomposed":
            alone = sample_grad_norms(model, x, y, spec=spec)
            monkeypatch.setitem(sample_norms._COTANGENTS_PER_BACKWARD, "cpu", 1)
            one = sample_grad_norms(model, x, y, spec=spec)
            monkeypatch.setitem(sample_norms._COTANGENTS_PER_BACKWARD, "cpu", 64)
            assert torch.allclose(alone.rows, one.rows, rtol=1e-9, atol=0)
        else:
            _assert_equal(model, x, y, spec)


class Late(nn.Module):
    """Wide convs on a small map (the Gram form's case) beside a conv called twice (never)."""

    def __init__(self) -> None:
        super().__init__()
        self.wide = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.wider = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.twice = nn.Conv2d(16, 16, 1)
        self.head = nn.Linear(16, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.wide(x)))
        h = self.twice(torch.relu(self.twice(torch.relu(self.wider(h)))))
        return self.head(h.mean((2, 3)))


@pytest.mark.parametrize("output", ["full", "target", "loss"])
@pytest.mark.parametrize("bn", ["sample", "eval"])
def test_norms_in_gram_form_equal_the_jacobian(monkeypatch: pytest.MonkeyPatch, bn: str, output: str) -> None:
    """A conv weight on a small map takes ‖ΔUᵀ‖² from UᵀU and ΔᵀΔ; a conv called twice and
    a spec asking for totals take the gradients; all equal the Jacobian's rows."""
    torch.set_num_threads(1)
    gram = _spy(monkeypatch, "_conv_squared_norms")
    model = _net(Late)
    x, y = _batch(shape=(3, 3, 3))
    spec = KernelSpec(output=output, bn=bn, params="all")
    rows, _ = _reference(model, x, y, spec)
    got = sample_grad_norms(model, x, y, spec=spec, chunk_size=3)
    assert torch.allclose(got.rows, rows, rtol=1e-6, atol=0)
    assert len(gram) >= 2  # wide and wider, per cotangent and chunk
    calls = len(gram)
    _assert_equal(model, x, y, spec)  # totals: the gradients themselves, no Gram form
    assert len(gram) == calls

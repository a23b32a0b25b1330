"""Stand-alone networks: shapes, the benchmark's parameter counts, FLOPs, ONNX export."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from nasforge.tools.export import export_onnx
from nasforge_nb201 import NB201Space, build, network_macs
from nasforge_nb201.cell import NB201Cell
from nasforge_nb201.macro import ResidualReduction

RESNET = ("nor_conv_3x3",) * 6
ALL_OPS = ("nor_conv_3x3", "none", "avg_pool_3x3", "skip_connect", "nor_conv_1x1", "nor_conv_3x3")


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_forward_32x32x3_benchmark_size() -> None:
    torch.manual_seed(0)
    net = build(RESNET).eval()
    with torch.no_grad():
        out = net(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, 10)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("size", [8, 9, 11, 16])
def test_forward_small_and_odd_inputs(size: int) -> None:
    """8x8x1 is sklearn digits; odd sizes need the ceil-mode shortcut to line up."""
    torch.manual_seed(0)
    net = build(ALL_OPS, C=4, N=1, num_classes=10, in_channels=1)
    out = net(torch.randn(3, 1, size, size))
    assert out.shape == (3, 10)
    out.sum().backward()  # trainable end to end


@pytest.mark.parametrize("bad", [{"C": 0}, {"N": -1}, {"num_classes": 2.5}, {"in_channels": True}])
def test_bad_sizes_are_refused_at_the_boundary(bad: dict) -> None:
    with pytest.raises(ValueError, match="must be a positive int"):
        build(RESNET, **bad)


def test_macro_structure() -> None:
    net = build(ALL_OPS, C=8, N=2, num_classes=7)
    kinds = [type(m) for m in net.layers]
    assert (
        kinds
        == [NB201Cell] * 2 + [ResidualReduction] + [NB201Cell] * 2 + [ResidualReduction] + [NB201Cell] * 2
    )
    assert [c.ops for c in net.cells()] == [ALL_OPS] * 6
    assert net.classifier.in_features == 32 and net.classifier.out_features == 7


def test_resnet_cell_parameter_count_matches_benchmark() -> None:
    """All-``nor_conv_3x3`` cell at C=16, N=5, 10 classes: 1,531,546 parameters (1.53 MB).

    Derivation, every conv bias-free, every BN affine (2 parameters per channel):
      * nor_conv_3x3 edge at c channels: 9c^2 + 2c; a cell has 6 of them: 54c^2 + 12c.
        c=16: 14,016; c=32: 55,680; c=64: 221,952. Times 5 cells: 70,080 + 278,400 +
        1,109,760 = 1,458,240.
      * stem: 3*16*9 + 2*16 = 464.
      * reduction a->b (b = 2a): 9ab + 2b + 9b^2 + 2b + ab (1x1 shortcut):
        16->32: 4,608 + 64 + 9,216 + 64 + 512 = 14,464; 32->64: 18,432 + 128 + 36,864 +
        128 + 2,048 = 57,600.
      * lastact BN(64): 128; classifier 64*10 + 10 = 650.
      Total 1,458,240 + 464 + 14,464 + 57,600 + 128 + 650 = 1,531,546.
    """
    assert n_params(build(RESNET)) == 1_531_546


def test_parameter_free_cell_leaves_only_the_macro() -> None:
    """skip/pool/none edges have no weights: 464 + 14,464 + 57,600 + 128 + 650 = 73,306."""
    cell = ("skip_connect", "avg_pool_3x3", "none", "skip_connect", "none", "avg_pool_3x3")
    assert n_params(build(cell)) == 73_306


def test_mixed_cell_parameter_count() -> None:
    """Row 6111 (CIFAR-10 optimum of the table): four 3x3 edges, one 1x1, one skip.

    Per cell 4(9c^2 + 2c) + (c^2 + 2c) = 37c^2 + 10c: 9,632 / 38,208 / 152,192 at
    c = 16 / 32 / 64; times 5 is 1,000,160; plus the 73,306 of the macro = 1,073,466.
    """
    g = NB201Space().parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    )
    assert n_params(build(g)) == 1_073_466


def _hooked_macs(net: nn.Module, shape: tuple[int, ...]) -> int:
    total = 0

    def conv(m: nn.Conv2d, _inp: tuple, out: torch.Tensor) -> None:
        nonlocal total
        kh, kw = m.kernel_size
        total += out[0].numel() * (m.in_channels // m.groups) * kh * kw

    def linear(m: nn.Linear, _inp: tuple, _out: torch.Tensor) -> None:
        nonlocal total
        total += m.in_features * m.out_features

    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            m.register_forward_hook(conv)
        elif isinstance(m, nn.Linear):
            m.register_forward_hook(linear)
    with torch.no_grad():
        net(torch.zeros(1, *shape))
    return total


@pytest.mark.parametrize("size", [32, 9])
def test_analytic_macs_match_the_modules(size: int) -> None:
    rng = random.Random(0)
    space = NB201Space()
    for _ in range(4):
        ops = space.sample(rng).choices
        net = build(ops, C=4, N=2, num_classes=5, in_channels=2)
        expected = network_macs(ops, C=4, N=2, resolution=size, in_channels=2, num_classes=5)
        assert _hooked_macs(net, (2, size, size)) == expected


def test_resnet_macs_match_the_benchmark_maximum() -> None:
    assert network_macs(RESNET) == 220_119_680  # the benchmark's ~220 MFLOPs maximum


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(1, 1, 8, 8), (1, 3, 9, 9)])
def test_onnx_export_matches_onnxruntime(tmp_path, shape: tuple[int, ...]) -> None:
    space = NB201Space()
    g = space.genotype(ALL_OPS)
    report = export_onnx(
        g,
        tmp_path / "nb201.onnx",
        space,
        input_shape=shape,
        build_options={"C": 4, "N": 1, "in_channels": shape[1]},
    )
    assert report.passed and report.max_abs_diff is not None


@pytest.mark.slow
def test_onnx_export_through_torch_export(tmp_path) -> None:
    """The newer dynamo exporter (about 7 s on a CPU for the full-size network)."""
    space = NB201Space()
    report = export_onnx(space.genotype(ALL_OPS), tmp_path / "nb201.onnx", space, dynamo=True)
    assert report.passed

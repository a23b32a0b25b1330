"""The trace-only NTK metrics give the numbers they gave before per-sample gradient norms.

"Before" is each metric's previous definition spelled out with the materialised-Jacobian
backends (the kernel formed, then its trace or its sum), on real NAS-Bench-201 cells at a
small width; "after" is the registered metric as it scores now, alone and scored together
with the rest (one shared forward). In float64 they agree to rounding; in float32 to the
rounding of a different summation order.
"""

from __future__ import annotations

import math
import random

import pytest
import torch

from nasforge import MetricContext, get_registry
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.backends import KernelSpec, empirical_ntk, jacobian, kernel_preset, spectrum
from nasforge.tools.scoring import resolve_metrics, score_model

LOSS = KernelSpec(output="loss", bn="sample", params="all")
FULL = KernelSpec(output="full", bn="sample", params="all")


def _before(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    def s(spec: KernelSpec):  # noqa: ANN202 - a Spectrum
        return spectrum(empirical_ntk(model, x, y, spec=spec, chunk_size=4))

    loss, hnas, per_sample = s(LOSS), s(kernel_preset("hnas-code")), s(kernel_preset("per-sample"))
    full = float(jacobian(model, x, spec=FULL, chunk_size=4).double().square().sum())
    return {
        "eigennas_trace": loss.trace / loss.size,
        "eigennas_ntk_trace": full / x.shape[0],
        "ntk_trace": math.sqrt(hnas.trace / hnas.size),
        "ntk_trace_per_sample": math.sqrt(per_sample.trace / per_sample.size),
        "knas": loss.total_sum / loss.size**2,
        "knas[thesis,per-sample]": math.sqrt(abs(per_sample.total_sum)) / per_sample.size,
    }


def _cell(seed: int, dtype: torch.dtype, width: int, size: int):  # noqa: ANN202
    space = get_registry().space("nb201")
    g = space.sample(random.Random(seed))
    model = seeded_build(lambda: space.build(g, C=width, N=1, num_classes=10), seed).train().to(dtype)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(6, 3, size, size, generator=gen, dtype=dtype)
    return model, x, torch.randint(0, 10, (6,), generator=gen)


NAMES = [
    "eigennas_trace",
    "eigennas_ntk_trace",
    "ntk_trace",
    "ntk_trace_per_sample",
    "knas",
    "knas[thesis,per-sample]",
]


def _metrics():  # noqa: ANN202
    return resolve_metrics(
        ["eigennas_trace", "eigennas_ntk_trace", "ntk_trace", "ntk_trace_per_sample", "knas"]
    ) + [resolve_metrics(["knas"])[0].__class__(variant="thesis")]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_scores_equal_the_materialised_kernels_in_float64(seed: int) -> None:
    torch.set_num_threads(1)
    model, x, y = _cell(seed, torch.float64, width=4, size=8)
    want = _before(model, x, y)
    ctx = MetricContext()
    together = score_model(model, (x, y), _metrics(), ctx=ctx)
    for m, name in zip(_metrics(), NAMES, strict=True):
        alone = m.score(model, (x, y), ctx=ctx)
        assert alone == pytest.approx(want[name], rel=1e-9), name
        assert together[name].value == pytest.approx(want[name], rel=1e-9), name


def test_scores_equal_the_materialised_kernels_in_float32() -> None:
    torch.set_num_threads(1)
    model, x, y = _cell(1, torch.float32, width=8, size=16)
    want = _before(model, x, y)
    together = score_model(model, (x, y), _metrics(), ctx=MetricContext())
    for name in NAMES:
        assert together[name].value == pytest.approx(want[name], rel=1e-6), name

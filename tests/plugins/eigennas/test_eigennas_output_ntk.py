"""The output-NTK reading of Eigen-NAS's score against an independent J Jᵀ.

``eigennas_ntk_trace`` is tr(J Jᵀ)/N with J the Jacobian of every logit of every sample
(each forwarded alone in train mode), every parameter. Here J is built row by row with
plain autograd (one backward per logit of each sample), the N·C x N·C kernel formed and
its trace taken: no torch.func, no chunking, nothing shared with the metric's code.
In float64: at 8x8 inputs the last stage's per-sample BatchNorm normalises 4 values, and
float32 round-off there moves both computations by up to 1 %, each its own way.
"""

from __future__ import annotations

import random

import pytest
import torch

from nasforge.kernel.metric import MetricContext
from nasforge.kernel.seeding import seeded_build
from nasforge_eigennas import EigenNasOutputTrace, EigenNasTrace
from nasforge_nb201.space import NB201Space


def _independent_trace(model: torch.nn.Module, x: torch.Tensor) -> float:
    params = [p for p in model.parameters() if p.requires_grad]
    rows = []
    for i in range(x.shape[0]):
        logits = model(x[i : i + 1])[0]  # the sample alone, train mode
        for c in range(logits.shape[0]):
            grads = torch.autograd.grad(logits[c], params, retain_graph=True, allow_unused=True)
            rows.append(
                torch.cat(
                    [
                        (g if g is not None else torch.zeros_like(p)).reshape(-1)
                        for g, p in zip(grads, params, strict=True)
                    ]
                )
            )
    jac = torch.stack(rows).double()
    kernel = jac @ jac.T  # (N·C, N·C)
    return float(torch.trace(kernel)) / x.shape[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_output_ntk_trace_equals_an_independent_j_jt(seed: int) -> None:
    torch.set_num_threads(1)
    space = NB201Space()
    g = space.sample(random.Random(seed))
    model = seeded_build(lambda: space.build(g, C=4, N=1, num_classes=5), seed).train().double()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(11, 3, 8, 8, generator=gen, dtype=torch.float64)  # 11: two chunks, the last short
    y = torch.randint(0, 5, (11,), generator=gen)
    ctx = MetricContext(num_classes=5)
    got = EigenNasOutputTrace().score(model, (x, y), ctx=ctx)
    want = _independent_trace(model, x)
    assert got == pytest.approx(want, rel=1e-9)
    # a different quantity from the loss-gradient reading and from the summed-logit NTK
    assert got != pytest.approx(EigenNasTrace().score(model, (x, y), ctx=ctx), rel=1e-2)
    assert got != pytest.approx(EigenNasTrace(output="sum").score(model, (x, y), ctx=ctx), rel=1e-2)

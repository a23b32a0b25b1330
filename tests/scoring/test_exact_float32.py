"""Scores are computed in full float32 on CUDA (the H100 finding of 2026-11-27).

Torch lets cuDNN convolutions run in TF32 by default; on a lent H100 that moved fisher,
GraSP, SNIP and the NTK metrics 1-7 % from the CPU's scores and broke the equality of a
chunked pass with an unchunked one. The flags can be set and read on a CPU build, so the
rule is tested here; the agreement itself is ``benchmarks/gpu_metrics.py``'s to show.
"""

from __future__ import annotations

import pytest
import torch

from nasforge import MetricContext
from nasforge.kernel.device import exact_float32
from nasforge.kernel.metric import Metric, MetricInfo
from nasforge.tools.scoring import resolve_metrics, score_model


def _flags() -> tuple[bool, bool]:
    return torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32


@pytest.fixture
def tf32_on():
    before = _flags()
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


def test_exact_float32_turns_tf32_off_and_restores_it_even_on_error(tf32_on) -> None:
    with exact_float32():
        assert _flags() == (False, False)
    assert _flags() == (True, True)
    with pytest.raises(RuntimeError, match="boom"), exact_float32():
        raise RuntimeError("boom")
    assert _flags() == (True, True)


class _FlagProbe(Metric):
    """Records the TF32 flags it was computed under."""

    info = MetricInfo(name="flag_probe", higher_is_better=True)
    seen: list[tuple[bool, bool]] = []

    def score(self, model, batch, *, ctx):  # type: ignore[no-untyped-def]
        self.seen.append(_flags())
        return 0.0


def test_scores_are_computed_without_tf32(tf32_on) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 3))
    batch = (torch.randn(4, 3, 2, 2), torch.tensor([0, 1, 2, 0]))
    probe = _FlagProbe()
    metrics = [probe, *resolve_metrics(["grad_norm"])]
    out = score_model(model, batch, metrics, ctx=MetricContext(device="cpu"))
    assert probe.seen == [(False, False)]
    assert out["grad_norm"].ok and out["grad_norm"].value > 0
    assert _flags() == (True, True)

"""Does an ONNX file compute what the PyTorch model computes? A check that is fair and sharp.

Fair: untrained NAS networks (skip- and pool-heavy cells stacked 15 deep) produce logits
of 1e5-1e7, where float32 rounding alone differs by far more than any absolute tolerance
meant for logits near 1. So the bound is ``atol + rtol * scale``, with ``scale`` the
largest |logit| of the same sample: rounding error in a logit is proportional to the
features that feed it, not to the logit itself, so a logit that nearly cancels must not
demand more digits than float32 has.

Sharp: a freshly built network has BatchNorm running mean 0 and variance 1 (and affine
weight 1, bias 0), so an exporter that folds BatchNorm wrongly, or drops it, gives the
same numbers. :func:`randomise_batchnorm` gives every BatchNorm layer of a *copy* of the
network (the exported file keeps the network as built) statistics of its own, so such an
error shows as a difference of order one; and it keeps every layer's signal at its
natural scale, so an error in any weight shows too.

Every random draw here comes from a generator of its own: checking an export must not
move torch's global random state (another thread's evaluation may be drawing from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import torch
from torch.nn.modules.batchnorm import _BatchNorm

from nasforge.kernel.errors import ExportError, first_line
from nasforge.kernel.optional import require
from nasforge.kernel.seeding import LocalRandomness, seeded_generator
from nasforge.tools.export.tolerance import DEFAULT_ATOL, DEFAULT_RTOL


@attrs.frozen
class ParityResult:
    """How closely onnxruntime agreed with PyTorch, and whether that is within bounds."""

    max_abs_diff: float
    max_rel_error: float  # max |diff| / (largest |logit| of its sample)
    atol: float
    rtol: float
    passed: bool
    #: max |diff| / (atol + rtol * scale): the share of the allowed difference used (<= 1 passes).
    tolerance_used: float = 0.0

    def describe(self) -> str:
        return (
            f"max |diff| {self.max_abs_diff:.3g} (relative {self.max_rel_error:.3g}) "
            f"exceeds atol {self.atol:.3g} + rtol {self.rtol:.3g} x |logits|"
        )


def randomise_batchnorm(model: torch.nn.Module, input_shape: Sequence[int], *, seed: int) -> int:
    """Give every BatchNorm layer statistics and affine parameters of its own.

    Random numbers alone are not enough: statistics unrelated to the activations (a mean
    of 0.5 where the signal has spread 0.01) make a layer's output a constant offset, and
    then the network's output no longer depends on the weights before it, so an error in
    them would pass. So: affine weights U(0.5, 1.5) and biases N(0, 0.2^2); then running
    statistics measured on a random batch (train-mode forward, so every layer sees the
    signal it will see); then each mean moved by N(0, 0.5^2) standard deviations and
    each variance scaled by U(0.5, 2), so no layer's statistics equal its batch's either.
    Uses its own generators, also for any draw the train-mode forward makes (dropout, drop
    path), so the caller's random state is untouched; returns the number of layers changed.
    """
    gen = seeded_generator(seed)
    layers = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not layers:
        return 0
    with torch.no_grad():
        for bn in layers:
            if bn.affine:
                bn.weight.copy_(0.5 + torch.rand(bn.weight.shape, generator=gen))
                bn.bias.copy_(0.2 * torch.randn(bn.bias.shape, generator=gen))
        _measure_statistics(model, layers, torch.randn((4, *input_shape[1:]), generator=gen), seed=seed)
        for bn in layers:
            if bn.running_mean is None or bn.running_var is None:
                continue
            std = bn.running_var.clamp_min(bn.eps).sqrt()
            bn.running_mean.add_(0.5 * std * torch.randn(std.shape, generator=gen))
            bn.running_var.mul_(0.5 + 1.5 * torch.rand(std.shape, generator=gen))
    return len(layers)


def _measure_statistics(
    model: torch.nn.Module, layers: Sequence[_BatchNorm], batch: torch.Tensor, *, seed: int
) -> None:
    """Running statistics equal to ``batch``'s (momentum None: a plain average of one batch).

    The forward pass is in train mode, where dropout or drop path would draw from torch's
    global generator: :class:`~nasforge.kernel.seeding.LocalRandomness` gives them one of their own.
    """
    modes = {m: m.training for m in model.modules()}
    momenta = {bn: bn.momentum for bn in layers}
    try:
        for bn in layers:
            if bn.track_running_stats:
                bn.reset_running_stats()
                bn.momentum = None
        model.train()
        with LocalRandomness(seed):
            model(batch)
    finally:
        for bn, momentum in momenta.items():
            bn.momentum = momentum
        for module, training in modes.items():
            module.training = training


def check_parity(
    model: torch.nn.Module,
    path: str | Path,
    input_shape: Sequence[int],
    *,
    atol: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    seed: int = 0,
) -> ParityResult:
    """Run ``model`` and the ONNX file at ``path`` on the same random batch and compare.

    Uses a batch of two (unlike the export example) to exercise the dynamic batch axis.
    Raises :class:`ExportError` if onnxruntime cannot load or run the file, or the output
    shapes differ; a numerical mismatch is reported in the result, not raised.
    """
    ort = require("onnxruntime", extra="onnx-check", feature="the ONNX parity check")
    x = torch.randn((2, *input_shape[1:]), generator=seeded_generator(seed + 1))
    with torch.no_grad():
        expected = model(x)
    if isinstance(expected, tuple | list):
        expected = expected[0]
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        (got_array,) = session.run(["logits"], {"input": x.numpy()})
    except Exception as exc:  # onnxruntime has its own exception types, none of them public
        raise ExportError(f"onnxruntime cannot run the exported model ({first_line(exc)})") from exc
    got = torch.from_numpy(got_array).to(expected.dtype)
    if got.shape != expected.shape:
        shapes = f"{tuple(got.shape)} vs PyTorch's {tuple(expected.shape)}"
        raise ExportError(f"the ONNX model's output shape differs: {shapes}")
    return compare(expected, got, atol=atol, rtol=rtol)


def compare(expected: torch.Tensor, got: torch.Tensor, *, atol: float, rtol: float) -> ParityResult:
    """Elementwise ``|got - expected| <= atol + rtol * scale``, ``scale`` per sample (row).

    Where PyTorch itself gives inf or nan, onnxruntime must give the same value.
    """
    e = expected.detach().double().reshape(expected.shape[0], -1)
    o = got.detach().double().reshape(got.shape[0], -1)
    finite = torch.isfinite(e)
    nonfinite_agree = bool(torch.where(finite, True, (e == o) | (e.isnan() & o.isnan())).all())
    e, o = torch.where(finite, e, 0.0), torch.where(finite, o, 0.0)
    diff = (o - e).abs()
    scale = e.abs().amax(dim=1, keepdim=True)
    bound = atol + rtol * scale
    within = bool((diff <= bound).all())
    tiny = torch.finfo(torch.float64).tiny
    max_abs = float(diff.max()) if diff.numel() else 0.0
    max_rel = float((diff / scale.clamp_min(tiny)).max()) if diff.numel() else 0.0
    used = float((diff / bound.clamp_min(tiny)).max()) if diff.numel() else 0.0
    return ParityResult(max_abs, max_rel, atol, rtol, within and nonfinite_agree, used)

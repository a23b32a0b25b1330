"""Export a genotype's network to ONNX and prove it computes the same thing.

The parity check runs the PyTorch model and onnxruntime on the same random inputs and
compares outputs: an export that silently changes numbers is worse than no export.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge.errors import ExportError
from nasforge.genotype import Genotype
from nasforge.optional import require
from nasforge.search_space import SearchSpace


@attrs.frozen
class OnnxReport:
    """What an export produced and how closely onnxruntime agreed."""

    path: Path
    input_shape: tuple[int, ...]
    max_abs_diff: float | None
    tolerance: float
    seconds: float
    checked: bool

    @property
    def passed(self) -> bool:
        return not self.checked or (self.max_abs_diff is not None and self.max_abs_diff <= self.tolerance)


def export_onnx(
    g: Genotype,
    path: str | os.PathLike[str],
    space: SearchSpace,
    *,
    input_shape: Sequence[int] = (1, 3, 32, 32),
    build_options: dict[str, Any] | None = None,
    check: bool = True,
    tolerance: float = 1e-4,
    opset: int = 17,
    seed: int = 0,
    dynamo: bool = False,
) -> OnnxReport:
    """Build ``g`` in eval mode, export with a dynamic batch axis, check with onnxruntime.

    ``dynamo=False`` uses the TorchScript exporter, about 20x faster than the torch.export
    path for these small convolutional networks; pass ``dynamo=True`` to use the newer one.
    Raises :class:`ExportError` when the parity check fails.
    """
    space.validate(g)
    torch.manual_seed(seed)
    model = space.build(g, **(build_options or {})).eval()
    example = torch.randn(*input_shape)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        _torch_export(model, example, path, opset=opset, dynamo=dynamo)
    except Exception as exc:
        raise ExportError(f"ONNX export of {space.format(g)} failed: {exc}") from exc
    _stamp_metadata(path, g, space)
    diff = None
    if check:
        diff = parity_error(model, path, input_shape, seed=seed)
    report = OnnxReport(path, tuple(input_shape), diff, tolerance, time.perf_counter() - t0, check)
    if not report.passed:
        raise ExportError(f"ONNX parity check failed: max |diff| {diff:.3g} > tolerance {tolerance:.3g}")
    return report


def _torch_export(
    model: torch.nn.Module, example: torch.Tensor, path: Path, *, opset: int, dynamo: bool
) -> None:
    """Export with a dynamic batch axis.

    The TorchScript exporter is deprecated but about 20x faster here; we choose it
    knowingly (and silence its warning), and fall back to torch.export when a future
    torch no longer has it.
    """
    names = {"input_names": ["input"], "output_names": ["logits"], "opset_version": opset}
    if not dynamo:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.filterwarnings("ignore", message="Constant folding", category=UserWarning)
                torch.onnx.export(
                    model,
                    (example,),
                    str(path),
                    dynamo=False,
                    dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                    **names,
                )
            return
        except (TypeError, NotImplementedError, AttributeError):
            pass  # legacy exporter gone: use torch.export below
    batch = torch.export.Dim("batch", min=1)
    torch.onnx.export(model, (example,), str(path), dynamo=True, dynamic_shapes=({0: batch},), **names)


def _stamp_metadata(path: Path, g: Genotype, space: SearchSpace) -> None:
    import onnx

    model = onnx.load(str(path))
    for key, value in {
        "nasforge.space": space.name,
        "nasforge.version": space.version,
        "nasforge.genotype": space.format(g),
    }.items():
        prop = model.metadata_props.add()
        prop.key, prop.value = key, value
    onnx.save(model, str(path))


def parity_error(model: torch.nn.Module, path: Path, input_shape: Sequence[int], *, seed: int = 0) -> float:
    """Largest absolute difference between PyTorch and onnxruntime on random inputs.

    Uses a batch of two (unlike the export example) to exercise the dynamic batch axis.
    """
    ort = require("onnxruntime", extra="onnx-check", feature="the ONNX parity check")
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn((2, *input_shape[1:]), generator=gen)
    with torch.no_grad():
        expected = model(x)
    if isinstance(expected, tuple | list):
        expected = expected[0]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {"input": x.numpy()})
    return float((torch.from_numpy(got) - expected).abs().max())

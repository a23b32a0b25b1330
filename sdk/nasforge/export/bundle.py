"""Export a search's best architecture in one call: genotype file plus checked ONNX model."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import attrs

from nasforge.export.genotype_file import export_genotype
from nasforge.export.onnx_export import OnnxReport, export_onnx
from nasforge.genotype import Genotype
from nasforge.search_space import BUILD, SearchSpace


@attrs.frozen
class ExportBundle:
    genotype_file: Path
    onnx: OnnxReport | None


def export_bundle(
    g: Genotype,
    out_dir: str | os.PathLike[str],
    space: SearchSpace,
    *,
    input_shape: tuple[int, ...] = (1, 3, 32, 32),
    num_classes: int | None = None,
    build_options: dict[str, Any] | None = None,
    onnx: bool = True,
    tolerance: float = 1e-4,
) -> ExportBundle:
    """``out_dir/genotype.safetensors`` and, where the space can build, ``out_dir/model.onnx``.

    ``in_channels`` and ``num_classes`` are taken from the data the search saw, so the
    exported network accepts that data; ``build_options`` override anything.
    """
    out = Path(out_dir)
    genotype_file = export_genotype(g, out / "genotype.safetensors", space)
    if not onnx or BUILD not in space.capabilities:
        return ExportBundle(genotype_file, None)
    params = inspect.signature(space.build).parameters
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    options: dict[str, Any] = {}
    if open_ended or "in_channels" in params:
        options["in_channels"] = input_shape[1]
    if num_classes is not None and (open_ended or "num_classes" in params):
        options["num_classes"] = num_classes
    options.update(build_options or {})
    report = export_onnx(
        g, out / "model.onnx", space, input_shape=input_shape, build_options=options, tolerance=tolerance
    )
    return ExportBundle(genotype_file, report)

"""Export a search's best architecture in one call: genotype file plus checked ONNX model.

The two files are one result, so they appear together or not at all: a refused parity
check, a build option the space rejects or a full disk leaves neither new file (and no
output directory the export had to create).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.datasets import build_option_names
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.tools.export.genotype_file import write_genotype
from nasforge.tools.export.onnx_export import OnnxReport, write_onnx
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.tools.export.staging import files_together, output_directory, write_error

GENOTYPE_FILE = "genotype.safetensors"
ONNX_FILE = "model.onnx"


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
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
) -> ExportBundle:
    """``out_dir/genotype.safetensors`` and, where the space can build, ``out_dir/model.onnx``.

    ``in_channels`` and ``num_classes`` are taken from the data the search saw, so the
    exported network accepts that data; ``build_options`` override anything.
    """
    out = Path(out_dir)
    space.validate(g)
    with_onnx = onnx and BUILD in space.capabilities
    targets: tuple[Path, ...] = (
        (out / GENOTYPE_FILE, out / ONNX_FILE) if with_onnx else (out / GENOTYPE_FILE,)
    )
    report: OnnxReport | None = None
    try:
        with output_directory(out), files_together(*targets) as staged:
            write_genotype(g, staged[0], space)
            if with_onnx:
                options = data_network_options(space, input_shape, num_classes, build_options)
                report = write_onnx(
                    g,
                    staged[1],
                    space,
                    input_shape=input_shape,
                    build_options=options,
                    tolerance=tolerance,
                    rtol=rtol,
                )
    except OSError as exc:
        raise write_error(out, exc) from exc
    if report is not None:
        report = attrs.evolve(report, path=targets[1])
    return ExportBundle(targets[0], report)


def data_network_options(
    space: SearchSpace,
    input_shape: tuple[int, ...],
    num_classes: int | None,
    build_options: dict[str, Any] | None,
) -> dict[str, Any]:
    """Build options matching the data (channels, classes) where ``space.build`` takes them."""
    accepted = build_option_names(space)
    options: dict[str, Any] = {}
    if len(input_shape) >= 2 and (accepted is None or "in_channels" in accepted):
        options["in_channels"] = input_shape[1]
    if num_classes is not None and (accepted is None or "num_classes" in accepted):
        options["num_classes"] = num_classes
    options.update(build_options or {})
    return options

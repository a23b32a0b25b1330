"""A trained network leaves as three files that belong together: its genotype, its
weights (safetensors) and an ONNX model that carries those weights.

``nasforge train ... --export DIR`` writes them; the ONNX model is checked against
onnxruntime like every export (:mod:`nasforge.tools.export.onnx_export`), on the trained
network. The weights file is the network's ``state_dict`` with a metadata header naming
the space, the architecture, the network options it was built with and what it was
trained on, so a user can rebuild it in PyTorch (``space.build(g, **options)``, then
``load_state_dict``) and ``nasforge inspect`` can say what it is without any plugin.
The three files appear together or not at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.errors import ExportError, first_line
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.tools.export.bundle import GENOTYPE_FILE, ONNX_FILE
from nasforge.tools.export.genotype_file import write_genotype
from nasforge.tools.export.onnx_export import OnnxReport, write_onnx
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.tools.export.staging import files_together, output_directory, write_error

WEIGHTS_FILE = "weights.safetensors"
WEIGHTS_FORMAT = "nasforge-weights/1"


@attrs.frozen
class TrainedExport:
    """The files a trained network was written to, and the ONNX parity check it passed."""

    genotype_file: Path
    weights_file: Path
    onnx: OnnxReport

    @property
    def onnx_file(self) -> Path:
        return self.onnx.path


def export_trained(
    model: nn.Module,
    g: Genotype,
    space: SearchSpace,
    out_dir: str | os.PathLike[str],
    *,
    input_shape: tuple[int, ...],
    build_options: dict[str, Any],
    weights: str,
    metadata: dict[str, str] | None = None,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
) -> TrainedExport:
    """``out_dir/genotype.safetensors``, ``weights.safetensors`` and ``model.onnx`` of the
    trained ``model`` (``g``'s network built with ``build_options``).

    ``weights`` says in a line what the weights are ("trained 30 epochs on mnist1d ...");
    ``metadata`` (strings) go into both the weights file's header and the ONNX model's
    ``nasforge.*`` properties. ``input_shape`` (``1, C, H, W`` or ``1, features``) is the
    example the ONNX export traces; its batch axis is dynamic.
    """
    out = Path(out_dir)
    space.validate(g)
    targets = (out / GENOTYPE_FILE, out / WEIGHTS_FILE, out / ONNX_FILE)
    extra = dict(metadata or {})
    try:
        with output_directory(out), files_together(*targets) as staged:
            write_genotype(g, staged[0], space)
            _write_weights(model, staged[1], g, space, build_options, weights, extra)
            report = write_onnx(
                g,
                staged[2],
                space,
                input_shape=input_shape,
                build_options=build_options,
                tolerance=tolerance,
                rtol=rtol,
                model=model,
                weights=weights,
                metadata={"build_options": json.dumps(build_options, sort_keys=True), **extra},
            )
    except OSError as exc:
        raise write_error(out, exc) from exc
    return TrainedExport(targets[0], targets[1], attrs.evolve(report, path=targets[2]))


def _write_weights(
    model: nn.Module,
    path: Path,
    g: Genotype,
    space: SearchSpace,
    build_options: dict[str, Any],
    weights: str,
    extra: dict[str, str],
) -> None:
    """The state dict (contiguous CPU tensors; safetensors refuses shared storage) and a
    header that makes the file explain itself."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    meta = {
        "format": WEIGHTS_FORMAT,
        "space": space.name,
        "version": space.version,
        "text": space.format(g),
        "genotype": json.dumps(g.to_json(), sort_keys=True),
        "build_options": json.dumps(build_options, sort_keys=True),
        "weights": weights,
        **{k.removeprefix("nasforge."): v for k, v in extra.items()},
    }
    try:
        save_file(tensors, str(path), metadata=meta)
    except OSError:
        raise
    except Exception as exc:  # safetensors' own errors (a tensor it cannot store)
        raise ExportError(f"cannot write the weights of {space.format(g)}: {first_line(exc)}") from exc


def read_weights_metadata(path: str | os.PathLike[str]) -> dict[str, str] | None:
    """The header of a nasforge weights file; None for any other safetensors file."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own types for damage
        raise ExportError(f"{path} is not a readable safetensors file ({first_line(exc)})") from exc
    return meta if meta.get("format") == WEIGHTS_FORMAT else None


def load_trained(
    path: str | os.PathLike[str], space: SearchSpace
) -> tuple[Genotype, dict[str, Any], dict[str, torch.Tensor]]:
    """The genotype, network options and state dict of a weights file, to rebuild the
    trained network: ``net = space.build(g, **options); net.load_state_dict(state)``."""
    from safetensors.torch import load_file

    meta = read_weights_metadata(path)
    if meta is None:
        raise ExportError(f"{path} is a safetensors file but not nasforge weights")
    try:
        g = Genotype.from_json(json.loads(meta["genotype"]))
        options = json.loads(meta["build_options"])
    except (KeyError, ValueError, TypeError) as exc:
        raise ExportError(f"{path}: damaged weights header ({first_line(exc)})") from exc
    space.validate(g)
    return g, options, load_file(str(path))

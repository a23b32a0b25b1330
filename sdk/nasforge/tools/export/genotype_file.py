"""Genotypes as safetensors files.

safetensors gives a file format that cannot execute code on load (unlike pickle) and a
string metadata header, which carries the space, its version, its op names and the
canonical text, so a file explains itself to ``nasforge inspect`` without any plugin; and
the options its space was made with and, for a space named by its file, that file, so
``export``, ``train`` and ``inspect --space`` make the same space from the file alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from nasforge.kernel.errors import ExportError, first_line
from nasforge.kernel.files import atomic_path
from nasforge.kernel.genotype import KIND_KEY, TENSOR_KEY, Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.space_source import loaded_source
from nasforge.tools.export.staging import output_directory, write_error

FORMAT = "nasforge-genotype/1"


def export_genotype(g: Genotype, path: str | os.PathLike[str], space: SearchSpace | None = None) -> Path:
    """Write ``g`` to ``path``; with ``space`` the file also records op names and text.

    The file appears only when complete (temporary name, then rename), readable by others.
    """
    path = Path(path)
    try:
        with output_directory(path.parent), atomic_path(path) as tmp:
            write_genotype(g, tmp, space)
    except OSError as exc:
        raise write_error(path, exc) from exc
    return path


def write_genotype(g: Genotype, path: Path, space: SearchSpace | None = None) -> None:
    """:func:`export_genotype` writing straight to ``path``, for callers that stage files."""
    from safetensors.torch import save_file

    if space is not None:
        space.validate(g)
    tensors, meta = g.to_tensors()
    meta["format"] = FORMAT
    if space is not None:
        meta["op_names"] = json.dumps(list(space.op_names))
        meta["text"] = space.format(g)
        source = loaded_source(type(space))
        if source is not None:  # a space named by its file: the file finds it again
            meta["space_source"] = source
        options = _options_text(space)
        if options is not None:  # made with options: the file makes the same space again
            meta["space_options"] = options
    save_file(tensors, str(path), metadata=meta)


def _options_text(space: SearchSpace) -> str | None:
    """The options ``space`` was made with, as JSON; None without any (or with one JSON
    cannot hold, which a reader could not give back)."""
    options = space.space_options
    if not options:
        return None
    try:
        return json.dumps(options, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def read_space_options(meta: dict[str, str], path: str | os.PathLike[str]) -> dict[str, Any]:
    """The options of the space a genotype file was written from (empty when it records none)."""
    if "space_options" not in meta:
        return {}
    try:
        options = json.loads(meta["space_options"])
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ExportError(f"{path}: space_options metadata is not JSON ({first_line(exc)})") from exc
    if not isinstance(options, dict):
        raise ExportError(f"{path}: space_options metadata is not a JSON object")
    return options


def read_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The metadata header of a nasforge genotype file (raises ExportError otherwise)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
    except FileNotFoundError as exc:
        raise ExportError(f"no such file: {path}") from exc
    except Exception as exc:  # safetensors raises its own error types for corrupt headers
        raise ExportError(f"{path} is not a readable safetensors file ({first_line(exc)})") from exc
    if meta.get("format") != FORMAT:
        raise ExportError(f"{path} is a safetensors file but not a nasforge genotype")
    return meta


def load_genotype(path: str | os.PathLike[str], space: SearchSpace | None = None) -> Genotype:
    """Read a genotype back; with ``space`` it is also validated against that space."""
    from safetensors.torch import load_file

    meta = read_metadata(path)
    try:
        tensors = load_file(str(path))
        _check_codes(tensors)
        g = Genotype.from_tensors(tensors, meta)
    except ExportError as exc:
        raise ExportError(f"{path}: corrupt nasforge genotype ({exc})") from exc
    except Exception as exc:
        raise ExportError(f"{path}: corrupt nasforge genotype ({first_line(exc)})") from exc
    if space is not None:
        space.validate(g)
    return g


def read_op_names(meta: dict[str, str], path: str | os.PathLike[str]) -> list[str] | None:
    """The op vocabulary the file records (None when written without a space)."""
    if "op_names" not in meta:
        return None
    try:
        names = json.loads(meta["op_names"])
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ExportError(f"{path}: op_names metadata is not JSON ({first_line(exc)})") from exc
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ExportError(f"{path}: op_names metadata is not a list of strings")
    return names


def _check_codes(tensors: dict[str, torch.Tensor]) -> None:
    """Refuse tensors of a shape or type no nasforge writer produces.

    The names and the range of each name code (a code of -1 would decode as the last
    op) are checked by ``Genotype.from_tensors`` itself, for every caller.
    """
    try:
        codes, kinds = tensors[TENSOR_KEY], tensors[KIND_KEY]
    except KeyError as exc:
        raise ExportError(f"tensor {exc} missing") from exc
    if codes.dim() != 1 or kinds.dim() != 1 or codes.shape != kinds.shape:
        raise ExportError("choice tensors must be one-dimensional and of equal length")
    if codes.dtype != torch.int64 or kinds.dtype != torch.uint8:
        raise ExportError(f"choice tensors have dtypes {codes.dtype}/{kinds.dtype}, not int64/uint8")
    if bool((kinds > 1).any()):
        raise ExportError("choice kinds must be 0 (integer) or 1 (name)")

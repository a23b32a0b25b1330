"""Genotypes as safetensors files.

safetensors gives a file format that cannot execute code on load (unlike pickle) and a
string metadata header, which carries the space, its version, its op names and the
canonical text, so a file explains itself to ``nasforge inspect`` without any plugin.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nasforge.errors import ExportError
from nasforge.genotype import Genotype
from nasforge.search_space import SearchSpace

FORMAT = "nasforge-genotype/1"


def export_genotype(g: Genotype, path: str | os.PathLike[str], space: SearchSpace | None = None) -> Path:
    """Write ``g`` to ``path``; with ``space`` the file also records op names and text."""
    from safetensors.torch import save_file

    if space is not None:
        space.validate(g)
    tensors, meta = g.to_tensors()
    meta["format"] = FORMAT
    if space is not None:
        meta["op_names"] = json.dumps(list(space.op_names))
        meta["text"] = space.format(g)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=meta)
    return path


def read_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The metadata header of a nasforge genotype file (raises ExportError otherwise)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
    except FileNotFoundError as exc:
        raise ExportError(f"no such file: {path}") from exc
    except Exception as exc:  # safetensors raises its own error types for corrupt headers
        raise ExportError(f"{path} is not a readable safetensors file ({_first_line(exc)})") from exc
    if meta.get("format") != FORMAT:
        raise ExportError(f"{path} is a safetensors file but not a nasforge genotype")
    return meta


def load_genotype(path: str | os.PathLike[str], space: SearchSpace | None = None) -> Genotype:
    """Read a genotype back; with ``space`` it is also validated against that space."""
    from safetensors.torch import load_file

    meta = read_metadata(path)
    try:
        g = Genotype.from_tensors(load_file(str(path)), meta)
    except Exception as exc:
        raise ExportError(f"{path}: corrupt nasforge genotype ({_first_line(exc)})") from exc
    if space is not None:
        space.validate(g)
    return g


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

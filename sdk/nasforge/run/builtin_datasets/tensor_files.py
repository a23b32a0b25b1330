"""A user's data as one tensor file: ``.npz``, ``.pt``/``.pth`` or ``.safetensors``.

The file holds ``x`` and ``y`` (and optionally ``x_test``, ``y_test``, ``num_classes``),
checked by :mod:`nasforge.run.builtin_datasets.user_arrays`. Each format is read without running
code from the file: NumPy with ``allow_pickle=False``, torch with ``weights_only=True``,
safetensors as it always is. A file that is not what its suffix says (empty, truncated,
another format) is one line naming the file and the format expected.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nasforge.kernel.datasets import DATA_FILE_SUFFIXES
from nasforge.run.builtin_datasets.user_arrays import DataError, UserData, user_data


def read_tensor_file(path: str | os.PathLike[str]) -> UserData:
    """The data in the tensor file at ``path`` (its format by its suffix), checked."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _READERS:
        raise DataError(
            f"{path}: unknown data file type {suffix or '(no suffix)'!r}; nasforge reads "
            f"{', '.join(DATA_FILE_SUFFIXES)} files and image folders"
        )
    if not path.is_file():
        raise DataError(f"{path}: not a file" if path.exists() else f"{path}: no such file")
    if path.stat().st_size == 0:
        raise DataError(f"{path}: the file is empty")
    what, reader = _READERS[suffix]
    try:
        arrays = reader(path)
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - each format's parser raises its own types on garbage
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not a readable {what} ({detail[:160]})") from None
    return user_data(arrays, name=path.stem, where=str(path))


def _npz(path: Path) -> Mapping[str, Any]:
    with open(path, "rb") as fh:
        start = fh.read(6)
    if start == b"\x93NUMPY":
        raise DataError(f"{path}: holds one array (a .npy), not named arrays x and y (np.savez them)")
    if not start.startswith(b"PK"):
        raise DataError(f"{path}: not a NumPy .npz archive (it is no zip file)")
    loaded = np.load(path, allow_pickle=False)
    if isinstance(loaded, np.ndarray):
        raise DataError(f"{path}: holds one array (a .npy), not named arrays x and y")
    with loaded:
        return {key: loaded[key] for key in loaded.files}


def _torch(path: Path) -> Mapping[str, Any]:
    loaded = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(loaded, Mapping) or not all(isinstance(k, str) for k in loaded):
        raise DataError(f"{path}: holds a {type(loaded).__name__}, not a dict of named tensors x and y")
    return dict(loaded)


def _safetensors(path: Path) -> Mapping[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(path))


_READERS: dict[str, tuple[str, Callable[[Path], Mapping[str, Any]]]] = {
    ".npz": ("NumPy .npz archive", _npz),
    ".pt": ("torch file", _torch),
    ".pth": ("torch file", _torch),
    ".safetensors": ("safetensors file", _safetensors),
}

"""A user's data as one tensor file: ``.npz``, ``.pt``/``.pth`` or ``.safetensors``.

The file holds ``x`` and ``y`` (and optionally ``x_test``, ``y_test``, ``num_classes``),
checked by :mod:`nasforge.run.builtin_datasets.user_arrays`. Each format is read without running
code from the file: NumPy with ``allow_pickle=False``, torch with ``weights_only=True``,
safetensors as it always is. A file that is not what its suffix says (empty, truncated,
another format) is one line naming the file and the format expected.
"""

from __future__ import annotations

import os
import pickle
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nasforge.kernel.datasets import DATA_FILE_SUFFIXES
from nasforge.run.builtin_datasets.data_paths import refuse_link_loop
from nasforge.run.builtin_datasets.user_arrays import DataError, UserData, user_data


def read_tensor_file(path: str | os.PathLike[str]) -> UserData:
    """The data in the tensor file at ``path`` (its format by its suffix), checked."""
    path = Path(path)
    refuse_link_loop(path)
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
        raise DataError(f"{path}: not a readable {what} ({_reason(exc)})") from None
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
    try:
        with warnings.catch_warnings():  # torch's warnings would come before the one line
            warnings.simplefilter("ignore")
            loaded = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        # torch words it "Unsupported global: GLOBAL x.y" or "unsupported GLOBAL x.y" by version
        found = re.search(r"[Uu]nsupported (?:global: )?GLOBAL ([\w.]+)", str(exc))
        if found is None:
            raise
        raise DataError(
            f"{path}: holds Python objects other than tensors ({found.group(1)}), which nasforge does "
            "not unpickle, since unpickling runs code from the file; save x and y as torch tensors "
            "(torch.as_tensor) or as a .npz or .safetensors file"
        ) from None
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


#: Longest library message quoted in a refusal; a longer one is cut where a sentence ends.
MAX_REASON = 200
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _reason(exc: BaseException) -> str:
    """A parser's complaint in a few words: its first line without terminal colour codes,
    cut after the last whole sentence (or word) that fits, never in the middle of one."""
    text = _ANSI.sub("", str(exc)).strip()
    first = text.splitlines()[0].strip() if text else type(exc).__name__
    if len(first) <= MAX_REASON:
        return first
    head = first[:MAX_REASON]
    end = head.rfind(". ")
    if end > MAX_REASON // 3:
        return head[: end + 1]
    return head[: head.rfind(" ")].rstrip(",;:") + " ..."

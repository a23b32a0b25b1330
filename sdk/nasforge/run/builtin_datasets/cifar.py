"""CIFAR-10 and CIFAR-100 from a copy on disk, in the python layout their site ships.

``cifar-10-python.tar.gz`` unpacks to ``cifar-10-batches-py/`` (``data_batch_1..5`` and
``test_batch``), ``cifar-100-python.tar.gz`` to ``cifar-100-python/`` (``train`` and
``test``); torchvision keeps the same files, so its copies work too. Nothing is ever
downloaded, and a missing or damaged directory is one line. The files are pickles, read
with an unpickler that only rebuilds what they hold (dicts, lists, bytes, numbers and
numpy arrays of numbers): a foreign file placed there cannot run code. This is the one
CIFAR reader of the package: the built-in ``cifar10``/``cifar100`` datasets and the DARTS
evaluation trainer both read through it.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError

#: The directory the CIFAR-10 python tarball unpacks to.
BATCHES_DIR = "cifar-10-batches-py"
TRAIN_FILES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_FILE = "test_batch"


@attrs.frozen
class Layout:
    """Where one CIFAR's python files are and which key holds the labels."""

    name: str
    title: str
    tarball: str
    folder: str
    train_files: tuple[str, ...]
    test_file: str
    labels: bytes
    classes: int


CIFAR10 = Layout(
    "cifar10", "CIFAR-10", "cifar-10-python.tar.gz", BATCHES_DIR, TRAIN_FILES, TEST_FILE, b"labels", 10
)
CIFAR100 = Layout(
    "cifar100",
    "CIFAR-100",
    "cifar-100-python.tar.gz",
    "cifar-100-python",
    ("train",),
    "test",
    b"fine_labels",
    100,
)


class _ArraysOnly(pickle.Unpickler):
    """Rebuilds numpy arrays and builtin values; any other global is refused."""

    _ALLOWED = {
        ("_codecs", "encode"),  # how a Python 3 protocol-2 pickle stores bytes
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"unexpected object {module}.{name}")


def batches_dir(data_dir: str | os.PathLike[str], layout: Layout = CIFAR10) -> Path:
    """``data_dir`` itself when it holds the batch files, else its ``cifar-10-batches-py``
    (``cifar-100-python``). One line when neither holds them (never a download)."""
    root = Path(data_dir).expanduser()
    for candidate in (root, root / layout.folder):
        if (candidate / layout.train_files[0]).is_file():
            return candidate
    if not root.exists():
        where = f"{root} does not exist"
    elif not root.is_dir():
        where = f"{root} is not a directory"
    else:
        where = f"neither {root} nor {root / layout.folder} holds {layout.train_files[0]}"
    raise NasforgeError(
        f"{layout.title} not found: {where} (nasforge never downloads: unpack {layout.tarball} "
        f"and pass --data-dir DIR/{layout.folder})"
    )


def _read_batch(path: Path, layout: Layout) -> tuple[torch.Tensor, torch.Tensor]:
    what = f"a {layout.title} python batch"
    try:
        with open(path, "rb") as fh:
            entry = _ArraysOnly(fh, encoding="bytes").load()
    except FileNotFoundError:
        raise NasforgeError(f"{layout.title} incomplete: {path} is missing") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise NasforgeError(f"{path} is not {what} ({exc})") from None
    if not isinstance(entry, dict):
        raise NasforgeError(f"{path} is not {what} (no dict inside)")
    data, labels = entry.get(b"data"), entry.get(layout.labels)
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        raise NasforgeError(f"{path} is not {what} (data is not N x 3072 uint8)")
    if not isinstance(labels, list) or len(labels) != data.shape[0]:
        raise NasforgeError(f"{path} is not {what} (labels do not match the images)")
    y = torch.tensor(labels, dtype=torch.int64)
    if y.numel() and (int(y.min()) < 0 or int(y.max()) > layout.classes - 1):
        raise NasforgeError(f"{path} is not {what} (labels outside 0..{layout.classes - 1})")
    x = torch.from_numpy(np.ascontiguousarray(data)).reshape(-1, 3, 32, 32)
    return x, y


def read_cifar(
    data_dir: str | os.PathLike[str], layout: Layout = CIFAR10, *, limit: int | None = None
) -> tuple[TensorData, TensorData]:
    """(training, test) images as uint8 (N, 3, 32, 32) with their labels, from disk;
    ``limit`` keeps the first ``limit`` images of each (smoke runs)."""
    folder = batches_dir(data_dir, layout)
    parts = [_read_batch(folder / name, layout) for name in layout.train_files]
    x, y = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    tx, ty = _read_batch(folder / layout.test_file, layout)
    if limit is not None:
        x, y, tx, ty = x[:limit], y[:limit], tx[:limit], ty[:limit]
    return (
        TensorData(f"{layout.name}-train", x, y, layout.classes),
        TensorData(f"{layout.name}-test", tx, ty, layout.classes),
    )


def cifar_loader(layout: Layout) -> Callable[..., TensorData]:
    """The registered dataset: one split as floats in [0, 1], from ``root`` (default:
    ``$NASFORGE_DATA``, else ``~/.nasforge/data``)."""

    def load(
        *, seed: int = 0, root: str | None = None, train: bool = True, limit: int | None = None
    ) -> TensorData:
        where = root or os.environ.get("NASFORGE_DATA", Path.home() / ".nasforge" / "data")
        split = read_cifar(where, layout, limit=limit)[0 if train else 1]
        return TensorData(layout.name, split.x.float() / 255.0, split.y, layout.classes)

    return load

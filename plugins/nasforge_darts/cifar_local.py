"""CIFAR-10 from a local directory, and the standard CIFAR augmentation in plain torch.

The data is read from the python-pickle layout the CIFAR site ships
(``cifar-10-python.tar.gz`` unpacked: ``cifar-10-batches-py/data_batch_1..5`` and
``test_batch``); nothing is ever downloaded, and a missing or damaged directory is one
line (:class:`~nasforge.kernel.errors.NasforgeError`). The batch files are pickles, so they are
read with an unpickler that only rebuilds what those files hold (dicts, lists, bytes,
numbers and numpy arrays of numbers): a foreign file placed there cannot run code.

Augmentation (the DARTS training transform, without torchvision): zero-pad by 4, random
32x32 crop, random horizontal flip, normalise by the CIFAR-10 channel mean and std; the
test images are only normalised. Every draw comes from a generator the caller passes.
"""

from __future__ import annotations

import os
import pickle
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
#: CIFAR-10 channel mean and std of the training images, as the DARTS code normalises.
CIFAR10_MEAN = (0.49139968, 0.48215827, 0.44653124)
CIFAR10_STD = (0.24703233, 0.24348505, 0.26158768)
IMAGES_PER_FILE = 10_000


@attrs.frozen(eq=False)
class ImageSplits:
    """Training and test images (uint8 0-255 or float 0-1) with their normalisation."""

    name: str
    train: TensorData
    test: TensorData
    mean: tuple[float, ...]
    std: tuple[float, ...]

    def __attrs_post_init__(self) -> None:
        channels = self.train.input_shape[0]
        if len(self.mean) != channels or len(self.std) != channels:
            raise ValueError(f"mean and std need {channels} values, one per channel")
        if self.train.input_shape != self.test.input_shape:
            raise ValueError("training and test images differ in shape")


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


def batches_dir(data_dir: str | os.PathLike[str]) -> Path:
    """``data_dir`` itself when it holds the batch files, else its ``cifar-10-batches-py``.

    One line when neither holds them, naming what was looked for (never a download).
    """
    root = Path(data_dir).expanduser()
    for candidate in (root, root / BATCHES_DIR):
        if (candidate / TRAIN_FILES[0]).is_file():
            return candidate
    if not root.exists():
        where = f"{root} does not exist"
    elif not root.is_dir():
        where = f"{root} is not a directory"
    else:
        where = f"neither {root} nor {root / BATCHES_DIR} holds {TRAIN_FILES[0]}"
    raise NasforgeError(
        f"CIFAR-10 not found: {where} (nasforge never downloads: unpack cifar-10-python.tar.gz "
        f"and pass --data-dir DIR/{BATCHES_DIR})"
    )


def _read_batch(path: Path) -> tuple[torch.Tensor, torch.Tensor]:
    try:
        with open(path, "rb") as fh:
            entry = _ArraysOnly(fh, encoding="bytes").load()
    except FileNotFoundError:
        raise NasforgeError(f"CIFAR-10 incomplete: {path} is missing") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise NasforgeError(f"{path} is not a CIFAR-10 python batch ({exc})") from None
    if not isinstance(entry, dict):
        raise NasforgeError(f"{path} is not a CIFAR-10 python batch (no dict inside)")
    data, labels = entry.get(b"data"), entry.get(b"labels")
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        raise NasforgeError(f"{path} is not a CIFAR-10 python batch (data is not N x 3072 uint8)")
    if not isinstance(labels, list) or len(labels) != data.shape[0]:
        raise NasforgeError(f"{path} is not a CIFAR-10 python batch (labels do not match the images)")
    y = torch.tensor(labels, dtype=torch.int64)
    if y.numel() and (int(y.min()) < 0 or int(y.max()) > 9):
        raise NasforgeError(f"{path} is not a CIFAR-10 python batch (labels outside 0..9)")
    x = torch.from_numpy(np.ascontiguousarray(data)).reshape(-1, 3, 32, 32)
    return x, y


def load_cifar10(data_dir: str | os.PathLike[str], *, limit: int | None = None) -> ImageSplits:
    """The 50,000 training and 10,000 test images, uint8 (N, 3, 32, 32), from disk.

    ``limit`` keeps the first ``limit`` images of each split (smoke runs).
    """
    folder = batches_dir(data_dir)
    parts = [_read_batch(folder / name) for name in TRAIN_FILES]
    x = torch.cat([p[0] for p in parts])
    y = torch.cat([p[1] for p in parts])
    tx, ty = _read_batch(folder / TEST_FILE)
    if limit is not None:
        x, y, tx, ty = x[:limit], y[:limit], tx[:limit], ty[:limit]
    return ImageSplits(
        "cifar10",
        TensorData("cifar10-train", x, y, 10),
        TensorData("cifar10-test", tx, ty, 10),
        CIFAR10_MEAN,
        CIFAR10_STD,
    )


def to_unit(x: torch.Tensor) -> torch.Tensor:
    """Images as float in [0, 1] (uint8 is divided by 255; float is taken as is)."""
    return x.float().div_(255.0) if x.dtype == torch.uint8 else x.float()


def normalise(x: torch.Tensor, mean: tuple[float, ...], std: tuple[float, ...]) -> torch.Tensor:
    m = torch.tensor(mean, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    s = torch.tensor(std, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    return (x - m) / s


def random_crop(x: torch.Tensor, padding: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Zero-pad by ``padding`` and cut a random window of the original size, per image."""
    if padding <= 0 or x.shape[0] == 0:
        return x
    n, _, h, w = x.shape
    padded = torch.nn.functional.pad(x, (padding, padding, padding, padding))
    oy = torch.randint(0, 2 * padding + 1, (n,), generator=generator).to(x.device)
    ox = torch.randint(0, 2 * padding + 1, (n,), generator=generator).to(x.device)
    rows = oy[:, None] + torch.arange(h, device=x.device)[None, :]  # (N, H)
    cols = ox[:, None] + torch.arange(w, device=x.device)[None, :]  # (N, W)
    batch = torch.arange(n, device=x.device)[:, None, None]
    # advanced indexing on dims 0, 2, 3 moves the channel dim last: (N, H, W, C)
    return padded.permute(0, 2, 3, 1)[batch, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


def random_flip(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Mirror each image left-right with probability 1/2."""
    if x.shape[0] == 0:
        return x
    flip = (torch.rand(x.shape[0], generator=generator) < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


def augment(
    x: torch.Tensor,
    mean: tuple[float, ...],
    std: tuple[float, ...],
    *,
    padding: int = 4,
    flip: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The training transform: pad + random crop, random flip, then normalise.

    The draws come from ``generator`` (a CPU one: the same crops on any device).
    """
    x = random_crop(to_unit(x), padding, generator)
    if flip:
        x = random_flip(x, generator)
    return normalise(x, mean, std)


def eval_transform(x: torch.Tensor, mean: tuple[float, ...], std: tuple[float, ...]) -> torch.Tensor:
    """The test transform: normalisation only."""
    return normalise(to_unit(x), mean, std)


__all__ = [
    "BATCHES_DIR",
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "ImageSplits",
    "augment",
    "batches_dir",
    "load_cifar10",
    "normalise",
    "random_crop",
    "random_flip",
    "eval_transform",
    "to_unit",
]

"""CIFAR-10 as the DARTS evaluation trains on it, and the standard augmentation in plain torch.

The images are read by the core's one CIFAR reader (:mod:`nasforge.run.builtin_datasets.cifar`: the
python layout, never downloaded, a missing or damaged directory in one line).

Augmentation (the DARTS training transform, without torchvision): zero-pad by 4, random
32x32 crop, random horizontal flip, normalise by the CIFAR-10 channel mean and std; the
test images are only normalised. Every draw comes from a generator the caller passes.
"""

from __future__ import annotations

import os

import attrs
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.run.builtin_datasets import BATCHES_DIR, CIFAR10, batches_dir, read_cifar

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


def load_cifar10(data_dir: str | os.PathLike[str], *, limit: int | None = None) -> ImageSplits:
    """The 50,000 training and 10,000 test images, uint8 (N, 3, 32, 32), from disk.

    ``limit`` keeps the first ``limit`` images of each split (smoke runs).
    """
    train, test = read_cifar(data_dir, CIFAR10, limit=limit)
    return ImageSplits("cifar10", train, test, CIFAR10_MEAN, CIFAR10_STD)


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

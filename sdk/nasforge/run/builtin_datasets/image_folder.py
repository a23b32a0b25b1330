"""A user's images in the ImageFolder layout: one subfolder per class, read with Pillow.

``root/cat/1.png, root/dog/7.jpg, ...``: the classes are the subfolders in sorted order
(label 0 is the first), as torchvision's ``ImageFolder`` numbers them; a root holding
exactly ``train/`` and ``test/``, each in that layout, gives a test split too. Only files
with an image suffix count (others, such as a README, are skipped, as torchvision does),
and every one of them must open as an image: a ``.png`` that is not one is refused in one
line. Images are scaled to [0, 1]; all grayscale gives one channel, anything else three
(RGB). They must share one size: resizing would decide for the user what the data is.

Pillow is imported only when a folder is read (it comes with matplotlib; ``pip install
pillow`` otherwise). torchvision is not needed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from nasforge.kernel.optional import require
from nasforge.run.builtin_datasets.user_arrays import DataError, UserData, user_data

#: The suffixes of files read as images (torchvision's ImageFolder list).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
#: Pillow modes read as one grayscale channel.
GRAYSCALE_MODES = frozenset({"1", "L", "LA", "I", "I;16", "F"})
#: A root whose subfolders are exactly these holds a training and a test split.
SPLITS = ("test", "train")


def read_image_folder(root: str | os.PathLike[str]) -> UserData:
    """The images under ``root`` with their class labels (and a test split, if laid out so)."""
    root = Path(root)
    folders = _class_folders(root)
    if tuple(f.name for f in folders) == SPLITS:
        test_root, train_root = folders
        classes = [f.name for f in _class_folders(train_root)]
        train = _images(train_root, classes)
        test = _images(test_root, classes)
        arrays: dict[str, Any] = {"x": train[0], "y": train[1], "x_test": test[0], "y_test": test[1]}
        _same_size_and_mode(train[2], test[2], root)
    else:
        classes = [f.name for f in folders]
        x, y, _ = _images(root, classes)
        arrays = {"x": x, "y": y}
    arrays["num_classes"] = np.int64(len(classes))
    return user_data(arrays, name=root.resolve().name or "images", where=str(root))


def _class_folders(root: Path) -> list[Path]:
    if not root.is_dir():
        raise DataError(f"{root}: no such folder" if not root.exists() else f"{root}: not a folder")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise DataError(f"{root}: no class subfolders (the ImageFolder layout: one subfolder per class)")
    if len(folders) == 1:
        raise DataError(f"{root}: one class subfolder ({folders[0].name}); a classifier needs at least two")
    return folders


def _images(root: Path, classes: list[str]) -> tuple[np.ndarray, np.ndarray, tuple[tuple[int, int], str]]:
    """Inputs N x C x H x W in [0, 1], labels, and the common (size, mode) of the images."""
    image_module = require("PIL.Image", extra="images", feature="reading an image folder")
    found = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if found != sorted(classes):
        raise DataError(f"{root}: class folders {found} differ from the training split's {sorted(classes)}")
    pictures: list[Any] = []
    labels: list[int] = []
    files: list[Path] = []
    for label, name in enumerate(classes):
        members = sorted(
            p for p in (root / name).iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
        )
        if not members:
            raise DataError(f"{root / name}: no images (files ending {', '.join(IMAGE_SUFFIXES[:3])}, ...)")
        for path in members:
            pictures.append(_open(image_module, path))
            labels.append(label)
            files.append(path)
    sizes = {p.size for p in pictures}
    if len(sizes) > 1:
        first = files[0]
        other = next(f for f, p in zip(files, pictures, strict=True) if p.size != pictures[0].size)
        raise DataError(
            f"{root}: images differ in size ({first.name} is {_wxh(pictures[0].size)}, "
            f"{other.relative_to(root)} {_wxh(pictures[files.index(other)].size)}); give them one size"
        )
    mode = "L" if all(p.mode in GRAYSCALE_MODES for p in pictures) else "RGB"
    x = np.stack([_pixels(p, mode) for p in pictures])
    return x, np.asarray(labels, dtype=np.int64), (pictures[0].size, mode)


def _open(image_module: Any, path: Path) -> Any:
    try:
        with image_module.open(path) as picture:
            picture.load()
            return picture.copy()
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types on a file that is no image
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not an image Pillow can read ({detail[:120]})") from None


def _pixels(picture: Any, mode: str) -> np.ndarray:
    """One image as C x H x W floats in [0, 1] (8 bits a channel, as Pillow converts it)."""
    array = np.asarray(picture.convert(mode), dtype=np.float32) / 255.0
    return array[None] if mode == "L" else array.transpose(2, 0, 1)


def _same_size_and_mode(
    train: tuple[tuple[int, int], str], test: tuple[tuple[int, int], str], root: Path
) -> None:
    if train[0] != test[0]:
        raise DataError(f"{root}: train images are {_wxh(train[0])}, test images {_wxh(test[0])}")
    if train[1] != test[1]:
        raise DataError(f"{root}: train images are {train[1]}, test images {test[1]} (one channel layout)")


def _wxh(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"

"""The ``files`` dataset: a user's own data, a tensor file or an image folder, by its path.

:func:`nasforge.kernel.datasets.load_dataset` hands it every name that is no registered
dataset but reads as a path, so ``--train-data data/train.npz`` and ``--train-data
photos/`` work wherever a dataset name does. A folder is read as an image folder
(:mod:`nasforge.run.builtin_datasets.image_folder`), a file by its suffix
(:mod:`nasforge.run.builtin_datasets.tensor_files`).
"""

from __future__ import annotations

from pathlib import Path

from nasforge.kernel.datasets import FILES_DATASET, TensorData
from nasforge.run.builtin_datasets.image_folder import read_image_folder
from nasforge.run.builtin_datasets.tensor_files import read_tensor_file
from nasforge.run.builtin_datasets.user_arrays import DataError, UserData


def read_user_data(path: str) -> UserData:
    """The data at ``path`` (``~`` expanded): an image folder or a tensor file."""
    where = Path(path).expanduser()
    if where.is_dir():
        return read_image_folder(where)
    return read_tensor_file(where)


def load_files(*, seed: int = 0, path: str | None = None, train: bool = True) -> TensorData:
    """The training split (``train=False``: the test split) of the data at ``path``; the
    run's ``seed`` does not change it."""
    if path is None:
        raise DataError(
            f"dataset '{FILES_DATASET}' reads your own data: give its path as the dataset "
            "(e.g. --train-data data/train.npz or --train-data photos/)"
        )
    return read_user_data(str(path)).split(train, str(path))

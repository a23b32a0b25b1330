"""The one CIFAR reader: the built-in ``cifar10`` and ``cifar100`` datasets read a copy on
disk in the python layout (torchvision keeps the same files), never download, and refuse
a missing or damaged copy in one line."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from nasforge.kernel.datasets import load_dataset
from nasforge.kernel.errors import NasforgeError
from nasforge.run.builtin_datasets import CIFAR10, CIFAR100, read_cifar


def _fake(root: Path, layout, per_file: int = 4) -> Path:  # noqa: ANN001 - a cifar layout
    folder = root / layout.folder
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in (*layout.train_files, layout.test_file):
        entry = {
            layout.labels: [int(v) for v in rng.integers(0, layout.classes, per_file)],
            b"data": rng.integers(0, 256, (per_file, 3072), dtype=np.uint8),
        }
        (folder / name).write_bytes(pickle.dumps(entry, protocol=2))
    return folder


@pytest.mark.parametrize("layout", [CIFAR10, CIFAR100], ids=["cifar10", "cifar100"])
def test_the_builtin_dataset_reads_the_python_layout(tmp_path: Path, layout) -> None:  # noqa: ANN001
    _fake(tmp_path, layout)
    train, test = read_cifar(tmp_path, layout)
    data = load_dataset(layout.name, root=str(tmp_path))
    assert data.num_classes == layout.classes and data.x.shape == (len(train), 3, 32, 32)
    assert torch.equal(data.x, train.x.float() / 255.0) and torch.equal(data.y, train.y)
    held_out = load_dataset(layout.name, root=str(tmp_path), train=False, limit=2)
    assert torch.equal(held_out.y, test.y[:2])


def test_a_missing_or_damaged_copy_is_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NASFORGE_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(NasforgeError, match="CIFAR-10 not found: .* does not exist .*never downloads"):
        load_dataset("cifar10")
    folder = _fake(tmp_path, CIFAR100)
    (folder / "test").write_bytes(b"not a pickle")
    with pytest.raises(NasforgeError, match="is not a CIFAR-100 python batch"):
        load_dataset("cifar100", root=str(tmp_path), train=False)

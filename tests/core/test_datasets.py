from __future__ import annotations

import pytest
import torch

from nasforge import NasforgeError, get_registry
from nasforge.run.builtin_datasets import load_digits, load_gaussian, with_random_labels


def test_digits_is_bundled_and_scaled() -> None:
    d = load_digits()
    assert len(d) == 1797 and d.input_shape == (1, 8, 8) and d.num_classes == 10
    assert float(d.x.min()) >= 0.0 and float(d.x.max()) <= 1.0
    assert d.digest() == load_digits().digest()


def test_gaussian_is_seeded() -> None:
    a, b, c = load_gaussian(seed=1, n=16), load_gaussian(seed=1, n=16), load_gaussian(seed=2, n=16)
    assert torch.equal(a.x, b.x) and a.digest() == b.digest() != c.digest()
    assert int(a.y.max()) < 10


def test_random_labels_keep_inputs() -> None:
    d = load_digits()
    r = with_random_labels(d, seed=0)
    assert torch.equal(r.x, d.x) and not torch.equal(r.y, d.y)


def test_batch_and_split_are_reproducible() -> None:
    d = load_gaussian(n=100)
    x1, _ = d.batch(10, seed=3)
    x2, _ = d.batch(10, seed=3)
    assert torch.equal(x1, x2)
    a, b = d.split(0.7, seed=0)
    assert len(a) == 70 and len(b) == 30


def test_registry_sources_load() -> None:
    reg = get_registry()
    assert len(reg.get("dataset", "digits-random-labels").load(seed=0)) == 1797


def test_cifar_never_downloads(tmp_path) -> None:
    """Without torchvision the extra is named; with it, a missing copy is an error, not a download."""
    with pytest.raises(NasforgeError, match=r"never downloads|pip install 'nasforge\[vision\]'"):
        get_registry().get("dataset", "cifar10").load(root=str(tmp_path))

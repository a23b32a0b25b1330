"""The datasets that always work offline: sklearn's bundled ``digits`` and generated data.

``gaussian`` (random data, random labels) is the data-agnostic mode and
``digits-random-labels`` the label-agnostic one (NASI's agnostic searches).
"""

from __future__ import annotations

import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.optional import require


def load_digits(*, seed: int = 0, image: bool = True) -> TensorData:
    """sklearn's bundled 8x8 digits (1,797 samples), scaled to [0, 1], as 1x8x8 images."""
    sk = require("sklearn.datasets", extra="digits", feature="the 'digits' dataset")
    bunch = sk.load_digits()
    x = torch.tensor(bunch.data, dtype=torch.float32) / 16.0
    if image:
        x = x.reshape(-1, 1, 8, 8)
    y = torch.tensor(bunch.target, dtype=torch.int64)
    return TensorData("digits", x, y, 10)


def load_gaussian(
    *,
    seed: int = 0,
    n: int = 512,
    shape: tuple[int, ...] = (3, 32, 32),
    num_classes: int = 10,
) -> TensorData:
    """Standard normal inputs with uniform random labels: the data-agnostic mode."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((n, *shape), generator=gen)
    y = torch.randint(0, num_classes, (n,), generator=gen)
    return TensorData("gaussian", x, y, num_classes)


def with_random_labels(data: TensorData, *, seed: int = 0) -> TensorData:
    """Same inputs, labels drawn uniformly: the label-agnostic mode."""
    gen = torch.Generator().manual_seed(seed)
    y = torch.randint(0, data.num_classes, (len(data),), generator=gen)
    return TensorData(f"{data.name}-random-labels", data.x, y, data.num_classes)


def load_digits_random_labels(*, seed: int = 0) -> TensorData:
    return with_random_labels(load_digits(seed=seed), seed=seed)

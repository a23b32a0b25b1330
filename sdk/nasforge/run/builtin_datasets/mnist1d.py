"""MNIST-1D (Greydanus & Kobak), generated offline by the ``mnist1d`` package.

On sklearn's digits every reasonable network scores 98-99 %, so nothing that separates
architectures can show; MNIST-1D is a small published benchmark made for that: ten
classes of 40-sample sequences built from templates by padding, shear, translation and
noise, on which small networks differ by several points. The package generates it from
its templates with ``make_dataset(get_dataset_args())`` (its ``seed`` 42, 5,000 samples,
the first 80 % its training split): nothing is downloaded.

Each sequence is a ``1 x 1 x 40`` image (one channel, one row), so every space that
trains on images builds its network for it unchanged: 3x3 convolutions and pooling with
padding keep the single row, a stride-2 reduction halves the length. Searches train on
the training split (they carve their own validation split from it) and the test split
(``train=False``) is for reporting only.

The package draws from Python's and NumPy's process-wide generators (it seeds them); the
loader puts both back as they were, so loading the data changes no one else's random
numbers.
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import Iterator

import numpy as np
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import OptionError
from nasforge.kernel.optional import require

#: The package's own settings: how many sequences in all, and its generation seed.
DEFAULT_SAMPLES = 5000
DEFAULT_DATA_SEED = 42
CLASSES = 10


def load_mnist1d(
    *,
    seed: int = 0,
    num_samples: int = DEFAULT_SAMPLES,
    data_seed: int = DEFAULT_DATA_SEED,
    train: bool = True,
) -> TensorData:
    """MNIST-1D's training split (``train=False``: its test split) as float32 ``N x 1 x 1 x 40``.

    ``seed`` is the run's and does not change the data (as for digits: the benchmark is
    one dataset); ``data_seed`` and ``num_samples`` generate another draw of it (the
    package's defaults: 42 and 5,000, split 4,000 / 1,000).
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 2 * CLASSES:
        raise OptionError(f"mnist1d: num_samples must be an integer >= {2 * CLASSES}, got {num_samples!r}")
    if isinstance(data_seed, bool) or not isinstance(data_seed, int) or not 0 <= data_seed < 2**32:
        raise OptionError(f"mnist1d: data_seed must be an integer in [0, 2**32), got {data_seed!r}")
    x, y, x_test, y_test = _generated(num_samples, data_seed)
    xs, ys = (x, y) if train else (x_test, y_test)
    name = "mnist1d" if train else "mnist1d-test"
    return TensorData(name, xs.clone(), ys.clone(), CLASSES)


@functools.lru_cache(maxsize=4)
def _generated(num_samples: int, data_seed: int) -> tuple[torch.Tensor, ...]:
    """The package's dataset, generated once per process and settings (about 1-10 s)."""
    data_module = require("mnist1d.data", extra="mnist1d", feature="the 'mnist1d' dataset")
    args = data_module.get_dataset_args()
    args.num_samples, args.seed = num_samples, data_seed
    with _global_generators_kept():
        raw = data_module.make_dataset(args)

    def sequences(key: str) -> torch.Tensor:
        return torch.as_tensor(np.asarray(raw[key], dtype=np.float32)).reshape(
            -1, 1, 1, args.final_seq_length
        )

    def labels(key: str) -> torch.Tensor:
        return torch.as_tensor(np.asarray(raw[key], dtype=np.int64))

    return sequences("x"), labels("y"), sequences("x_test"), labels("y_test")


@contextlib.contextmanager
def _global_generators_kept() -> Iterator[None]:
    """Python's and NumPy's global generator states, restored after the block."""
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)

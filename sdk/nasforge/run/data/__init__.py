"""The core's own datasets, registered by its built-in plugin like any plugin's.

Built in: sklearn's bundled ``digits``; ``gaussian`` (random data, random labels: the
data-agnostic mode); ``digits-random-labels`` (label-agnostic); ``cifar10``/``cifar100``
only from a copy the user has on disk (:mod:`nasforge.run.data.cifar`).
"""

from nasforge.kernel.datasets import DatasetSource
from nasforge.run.data.bundled import (
    load_digits,
    load_digits_random_labels,
    load_gaussian,
    with_random_labels,
)
from nasforge.run.data.cifar import (
    BATCHES_DIR,
    CIFAR10,
    CIFAR100,
    TEST_FILE,
    TRAIN_FILES,
    batches_dir,
    cifar_loader,
    read_cifar,
)

BUILTIN_DATASETS = (
    DatasetSource("digits", "sklearn's bundled 8x8 handwritten digits, 10 classes", load_digits),
    DatasetSource("gaussian", "random Gaussian inputs, random labels (data-agnostic)", load_gaussian),
    DatasetSource(
        "digits-random-labels",
        "digits inputs with uniform random labels (label-agnostic)",
        load_digits_random_labels,
    ),
    DatasetSource(
        "cifar10", "CIFAR-10 from a copy on disk (python layout), never downloaded", cifar_loader(CIFAR10)
    ),
    DatasetSource(
        "cifar100", "CIFAR-100 from a copy on disk (python layout), never downloaded", cifar_loader(CIFAR100)
    ),
)

__all__ = [
    "BATCHES_DIR",
    "BUILTIN_DATASETS",
    "CIFAR10",
    "CIFAR100",
    "TEST_FILE",
    "TRAIN_FILES",
    "batches_dir",
    "load_digits",
    "load_digits_random_labels",
    "load_gaussian",
    "read_cifar",
    "with_random_labels",
]

"""The core's own datasets, registered by its built-in plugin like any plugin's.

Built in: sklearn's bundled ``digits``; ``mnist1d`` (MNIST-1D, generated offline by its
package: a small benchmark on which architectures differ, :mod:`nasforge.run.builtin_datasets.mnist1d`);
``gaussian`` (random data, random labels: the data-agnostic mode); ``digits-random-labels``
(label-agnostic); ``cifar10``/``cifar100`` only from a copy the user has on disk
(:mod:`nasforge.run.builtin_datasets.cifar`); ``files``, the user's own tensor file or image folder,
given by its path (:mod:`nasforge.run.builtin_datasets.user_files`).

Named apart from :mod:`nasforge.kernel.datasets` (data as the contracts see it, and how
a name is looked up) and :mod:`nasforge.run.run_data` (which data a run trains on, as its
journal records it): this package holds the core's own datasets.
"""

from nasforge.kernel.datasets import FILES_DATASET, DatasetSource
from nasforge.run.builtin_datasets.bundled import (
    load_digits,
    load_digits_random_labels,
    load_gaussian,
    with_random_labels,
)
from nasforge.run.builtin_datasets.cifar import (
    BATCHES_DIR,
    CIFAR10,
    CIFAR100,
    TEST_FILE,
    TRAIN_FILES,
    batches_dir,
    cifar_loader,
    read_cifar,
)
from nasforge.run.builtin_datasets.mnist1d import load_mnist1d
from nasforge.run.builtin_datasets.user_arrays import DataError, UserData, user_data
from nasforge.run.builtin_datasets.user_files import load_files, read_user_data

BUILTIN_DATASETS = (
    DatasetSource("digits", "sklearn's bundled 8x8 handwritten digits, 10 classes", load_digits),
    DatasetSource(
        "mnist1d",
        "MNIST-1D, 4,000 + 1,000 test sequences of length 40 (as 1x1x40), 10 classes, generated "
        "offline by its package (the optional extra mnist1d)",
        load_mnist1d,
        test_split=True,
    ),
    DatasetSource("gaussian", "random Gaussian inputs, random labels (data-agnostic)", load_gaussian),
    DatasetSource(
        "digits-random-labels",
        "digits inputs with uniform random labels (label-agnostic)",
        load_digits_random_labels,
    ),
    DatasetSource(
        "cifar10",
        "CIFAR-10 from a copy on disk (python layout), never downloaded",
        cifar_loader(CIFAR10),
        test_split=True,
    ),
    DatasetSource(
        "cifar100",
        "CIFAR-100 from a copy on disk (python layout), never downloaded",
        cifar_loader(CIFAR100),
        test_split=True,
    ),
    DatasetSource(
        FILES_DATASET,
        "your own data by its path: a .npz/.pt/.safetensors file (x, y, optional x_test, y_test) "
        "or an image folder (one subfolder per class)",
        load_files,
        test_split=True,
    ),
)

__all__ = [
    "BATCHES_DIR",
    "BUILTIN_DATASETS",
    "CIFAR10",
    "CIFAR100",
    "TEST_FILE",
    "TRAIN_FILES",
    "DataError",
    "UserData",
    "batches_dir",
    "load_digits",
    "load_digits_random_labels",
    "load_files",
    "load_gaussian",
    "load_mnist1d",
    "read_cifar",
    "read_user_data",
    "user_data",
    "with_random_labels",
]

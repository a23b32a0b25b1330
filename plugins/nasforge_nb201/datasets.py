"""The benchmark's three datasets: canonical names, table columns, and training facts.

The table, the evaluator and the simulated clock each need to know what "cifar100" means
(which CSV column, how many training images at what resolution); keeping those facts in
one frozen record per dataset stops the three from drifting apart. Only the table's own
datasets are listed: this is about the benchmark, not about data a user can train on.
"""

from __future__ import annotations

import attrs

from nasforge.errors import UnknownNameError


def _positive(_inst: object, attr: attrs.Attribute, value: int) -> None:
    if value <= 0:
        raise ValueError(f"BenchmarkDataset.{attr.name} must be > 0, got {value}")


@attrs.frozen
class BenchmarkDataset:
    """One dataset of the benchmark as the table and the cost model see it."""

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    #: Column of the bundled CSV holding this dataset's 200-epoch test accuracy.
    column: str = attrs.field(validator=attrs.validators.min_len(1))
    #: Images the benchmark trained on (CIFAR: the full 50k train set; ImageNet16-120: 151.7k).
    train_images: int = attrs.field(validator=[attrs.validators.instance_of(int), _positive])
    resolution: int = attrs.field(validator=[attrs.validators.instance_of(int), _positive])
    num_classes: int = attrs.field(validator=[attrs.validators.instance_of(int), _positive])


DATASETS: tuple[BenchmarkDataset, ...] = (
    BenchmarkDataset("cifar10", "CIFAR10TestAccuracy200Epochs", 50_000, 32, 10),
    BenchmarkDataset("cifar100", "CIFAR100TestAccuracy200Epochs", 50_000, 32, 100),
    BenchmarkDataset("imagenet16-120", "ImageNetTestAccuracy200Epochs", 151_700, 16, 120),
)
DATASET_NAMES: tuple[str, ...] = tuple(d.name for d in DATASETS)
_BY_NAME = {d.name: d for d in DATASETS}


def benchmark_dataset(name: str) -> BenchmarkDataset:
    """The dataset called ``name`` (case-insensitive: ``ImageNet16-120`` works).

    Unknown names raise :class:`~nasforge.errors.UnknownNameError` listing the three.
    """
    key = name.lower() if isinstance(name, str) else name
    if key not in _BY_NAME:
        raise UnknownNameError("nb201 dataset", str(name), DATASET_NAMES)
    return _BY_NAME[key]


def dataset_position(name: str) -> int:
    """Position of the dataset in :data:`DATASETS` (its column in the accuracy matrix)."""
    return DATASET_NAMES.index(benchmark_dataset(name).name)

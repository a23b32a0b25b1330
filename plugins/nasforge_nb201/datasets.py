"""The benchmark's three datasets: canonical names, table columns, and network facts.

The table, the bundling code and the evaluator each need to know what "cifar100" means
(which CSV columns, how many classes at what resolution); keeping those facts in one
frozen record per dataset stops them from drifting apart. Only the table's own datasets
are listed: this is about the benchmark, not about data a user can train on.

What each column measures follows the benchmark protocol (NAS-Bench-201 paper,
NATS-Bench): the validation accuracy is the ``x-valid`` split (for CIFAR-10 the
``cifar10-valid`` run: 25k training images, validated on the other 25k), the test
accuracy the ``x-test`` split (CIFAR-10: the model retrained on all 50k). A search
observes the former and reports the latter.
"""

from __future__ import annotations

import attrs

from nasforge.kernel.errors import UnknownNameError


def _positive(_inst: object, attr: attrs.Attribute, value: int) -> None:
    if isinstance(value, bool) or value <= 0:
        raise ValueError(f"BenchmarkDataset.{attr.name} must be > 0, got {value}")


@attrs.frozen
class BenchmarkDataset:
    """One dataset of the benchmark as the table and the networks see it."""

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    #: Prefix of this dataset's columns in the bundled CSV (``<prefix>_valid``, ...).
    prefix: str = attrs.field(validator=attrs.validators.matches_re(r"[a-z0-9]+"))
    resolution: int = attrs.field(validator=[attrs.validators.instance_of(int), _positive])
    num_classes: int = attrs.field(validator=[attrs.validators.instance_of(int), _positive])


DATASETS: tuple[BenchmarkDataset, ...] = (
    BenchmarkDataset("cifar10", "cifar10", 32, 10),
    BenchmarkDataset("cifar100", "cifar100", 32, 100),
    BenchmarkDataset("imagenet16-120", "imagenet16", 16, 120),
)
DATASET_NAMES: tuple[str, ...] = tuple(d.name for d in DATASETS)
_BY_NAME = {d.name: d for d in DATASETS}


def benchmark_dataset(name: str) -> BenchmarkDataset:
    """The dataset called ``name`` (case-insensitive: ``ImageNet16-120`` works).

    Unknown names raise :class:`~nasforge.kernel.errors.UnknownNameError` listing the three.
    """
    key = name.lower() if isinstance(name, str) else name
    if key not in _BY_NAME:
        raise UnknownNameError("nb201 dataset", str(name), DATASET_NAMES)
    return _BY_NAME[key]


def dataset_position(name: str) -> int:
    """Position of the dataset in :data:`DATASETS` (its column in the per-dataset arrays)."""
    return DATASET_NAMES.index(benchmark_dataset(name).name)

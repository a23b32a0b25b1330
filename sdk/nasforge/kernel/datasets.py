"""Small in-memory datasets that always work offline, and the one owner of dataset names.

Training-free metrics and CPU demos need one batch or a few thousand samples, not a data
pipeline; everything here is a pair of tensors with a content hash for the journal.
Built in: sklearn's bundled ``digits``; ``gaussian`` (random data, random labels: the
data-agnostic mode); ``digits-random-labels`` (label-agnostic); ``cifar10``/``cifar100``
through torchvision, only when the user already has them on disk.

Runs, evaluators, sweeps and strategies turn a dataset name into data only through
:func:`load_dataset` (with the caller's registry) and read what a network must be built
for only through :func:`network_options`, so a name is looked up, and a shape inferred,
the same way everywhere. This module sits below the registry (the core's built-in plugin
imports it), so it never fetches the process-wide registry itself.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Protocol

import attrs
import torch

from nasforge.kernel.errors import NasforgeError, UnknownNameError
from nasforge.kernel.optional import require


@attrs.frozen(eq=False)
class TensorData:
    """Inputs, integer labels and the number of classes."""

    name: str
    x: torch.Tensor
    y: torch.Tensor
    num_classes: int

    def __attrs_post_init__(self) -> None:
        if self.x.shape[0] != self.y.shape[0]:
            raise ValueError("inputs and labels differ in length")

    def __len__(self) -> int:
        return int(self.x.shape[0])

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x.shape[1:])

    def digest(self) -> str:
        """sha256 of the contents (short): recorded in journals and metric caches."""
        h = hashlib.sha256()
        h.update(self.x.detach().cpu().contiguous().numpy().tobytes())
        h.update(self.y.detach().cpu().contiguous().numpy().tobytes())
        return h.hexdigest()[:16]

    def batch(self, size: int, *, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """A reproducible random batch of ``size`` samples."""
        gen = torch.Generator().manual_seed(seed)
        idx = torch.randperm(len(self), generator=gen)[: min(size, len(self))]
        return self.x[idx], self.y[idx]

    def split(self, fraction: float, *, seed: int = 0) -> tuple[TensorData, TensorData]:
        """Two disjoint random parts, the first holding ``fraction`` of the samples."""
        gen = torch.Generator().manual_seed(seed)
        idx = torch.randperm(len(self), generator=gen)
        cut = int(round(fraction * len(self)))
        a, b = idx[:cut], idx[cut:]
        return (
            TensorData(f"{self.name}[a]", self.x[a], self.y[a], self.num_classes),
            TensorData(f"{self.name}[b]", self.x[b], self.y[b], self.num_classes),
        )


@attrs.frozen
class DatasetSource:
    """A named way to obtain a :class:`TensorData` (registered through the hooks)."""

    name: str
    description: str
    loader: Callable[..., TensorData]

    def load(self, **options: Any) -> TensorData:
        return self.loader(**options)


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


def _torchvision_loader(dataset: str, num_classes: int) -> Callable[..., TensorData]:
    def load(
        *, seed: int = 0, root: str | None = None, train: bool = True, limit: int | None = None
    ) -> TensorData:
        tv = require("torchvision.datasets", extra="vision", feature=f"the '{dataset}' dataset")
        root_path = Path(root or os.environ.get("NASFORGE_DATA", Path.home() / ".nasforge" / "data"))
        cls = getattr(tv, dataset.upper())
        try:
            ds = cls(str(root_path), train=train, download=False)
        except RuntimeError as exc:
            raise NasforgeError(
                f"{dataset} not found under {root_path}: nasforge never downloads; "
                "place the torchvision copy there or set NASFORGE_DATA"
            ) from exc
        x = torch.tensor(ds.data).permute(0, 3, 1, 2).float() / 255.0
        y = torch.tensor(ds.targets, dtype=torch.int64)
        if limit is not None:
            x, y = x[:limit], y[:limit]
        return TensorData(dataset, x, y, num_classes)

    return load


BUILTIN_DATASETS = (
    DatasetSource("digits", "sklearn's bundled 8x8 handwritten digits, 10 classes", load_digits),
    DatasetSource("gaussian", "random Gaussian inputs, random labels (data-agnostic)", load_gaussian),
    DatasetSource(
        "digits-random-labels",
        "digits inputs with uniform random labels (label-agnostic)",
        load_digits_random_labels,
    ),
    DatasetSource("cifar10", "CIFAR-10 via torchvision, from disk only", _torchvision_loader("cifar10", 10)),
    DatasetSource(
        "cifar100", "CIFAR-100 via torchvision, from disk only", _torchvision_loader("cifar100", 100)
    ),
)


class ComponentLookup(Protocol):
    """What :func:`load_dataset` needs of a registry (a :class:`nasforge.Registry` is one)."""

    def get(self, kind: str, name: str) -> Any: ...


def load_dataset(
    name: str, *, registry: ComponentLookup | None = None, seed: int = 0, **options: Any
) -> TensorData:
    """The dataset registered as ``name``, loaded with ``seed`` and ``options``.

    ``registry`` is the caller's (a run's, the CLI's); without one only the core's
    built-in datasets are known. Choosing the process-wide registry is for the entry
    points (``nasforge.get_registry()``), never for a loader deep inside a run, where it
    would silently ignore the registry the run was given.
    """
    if registry is not None:
        source = registry.get("dataset", name)
    else:
        builtin = {d.name: d for d in BUILTIN_DATASETS}
        if name not in builtin:
            raise UnknownNameError("dataset", name, builtin)
        source = builtin[name]
    data = source.load(seed=seed, **options)
    if not isinstance(data, TensorData):
        raise NasforgeError(f"dataset '{name}' loaded a {type(data).__name__}, not a TensorData")
    return data


def network_options(
    input_shape: tuple[int, ...], num_classes: int, *, accepted: Collection[str] | None = None
) -> dict[str, int]:
    """The network options the data decides: ``num_classes``, and ``in_channels`` for
    image-shaped ``(C, H, W)`` inputs, each only where ``accepted`` (None: any) takes it.

    Every place that builds a network or supernet for a dataset (short training, the
    one-shot searches, exports) fills these in the same way, so ``digits``' 1x8x8 images
    work with no options anywhere; options the user gives are meant to override them.
    """
    out: dict[str, int] = {}
    if accepted is None or "num_classes" in accepted:
        out["num_classes"] = int(num_classes)
    if len(input_shape) == 3 and (accepted is None or "in_channels" in accepted):
        out["in_channels"] = int(input_shape[0])
    return out

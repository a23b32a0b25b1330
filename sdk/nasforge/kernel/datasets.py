"""Data as the contracts see it: a pair of in-memory tensors with a content hash.

Training-free metrics and CPU demos need one batch or a few thousand samples, not a data
pipeline. Runs, evaluators, sweeps and strategies turn a dataset name into data only
through :func:`load_dataset` (with the caller's registry) and read what a network must be
built for only through :func:`network_options`, so a name is looked up, and a shape
inferred, the same way everywhere. The datasets themselves are registered components
(the core's own are in :mod:`nasforge.run.builtin_datasets`).
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Callable, Collection
from typing import Any, Protocol

import attrs
import torch

from nasforge.kernel.errors import NasforgeError, UnknownNameError
from nasforge.kernel.registry import builtin_registry

#: The registered dataset that reads a user's own data (tensor files, image folders): a
#: name that is no registered dataset but a path is loaded by it, with ``path=name``.
FILES_DATASET = "files"
#: What a user's tensor file may be called (an image folder is a directory).
DATA_FILE_SUFFIXES = (".npz", ".pt", ".pth", ".safetensors")


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
    """A named way to obtain a :class:`TensorData` (registered through the hooks).

    ``test_split`` says the loader takes ``train=False`` and then returns the dataset's own
    test split (declared, so that a caller holding out data for a final check never has to
    guess from the loader's signature)."""

    name: str
    description: str
    loader: Callable[..., TensorData]
    test_split: bool = attrs.field(default=False, kw_only=True)

    def load(self, **options: Any) -> TensorData:
        return self.loader(**options)


class ComponentLookup(Protocol):
    """What :func:`load_dataset` needs of a registry (a :class:`nasforge.Registry` is one)."""

    def get(self, kind: str, name: str) -> Any: ...


def load_dataset(
    name: str, *, registry: ComponentLookup | None = None, seed: int = 0, **options: Any
) -> TensorData:
    """The dataset registered as ``name``, loaded with ``seed`` and ``options``.

    ``registry`` is the caller's (a run's, the CLI's); without one only the core's
    built-in datasets are known (a registry of no installed plugin). Choosing the
    process-wide registry is for the entry points (``nasforge.get_registry()``), never for a
    loader deep inside a run, where it would silently ignore the registry the run was given.

    A ``name`` that no dataset is registered under but that reads as a path
    (:func:`is_data_path`) is the user's own data, loaded by the dataset
    :data:`FILES_DATASET` with ``path=name``: so every place that takes a dataset name
    (``--train-data``, ``--data``, one-shot strategies, evaluators) takes a file too.
    """
    if registry is None:
        registry = builtin_registry()
    try:
        source = registry.get("dataset", name)
    except UnknownNameError:
        if not is_data_path(name):
            raise
        source, options = registry.get("dataset", FILES_DATASET), {"path": name, **options}
    data = source.load(seed=seed, **options)
    if not isinstance(data, TensorData):
        raise NasforgeError(f"dataset '{name}' loaded a {type(data).__name__}, not a TensorData")
    return data


def is_data_path(name: str) -> bool:
    """Whether ``name`` names a file or folder rather than a dataset: it holds a path
    separator, starts with ``.`` or ``~``, ends with a tensor file's suffix, or exists (a
    symbolic link counts even where it leads nowhere, so the loader says what is wrong).

    Registered names are plain words, so the two never overlap; a registered name wins
    over a file of the same name in the working directory.
    """
    separators = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    return (
        any(sep in name for sep in separators)
        or name.startswith((".", "~"))
        or name.lower().endswith(DATA_FILE_SUFFIXES)
        or os.path.lexists(name)
    )


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


def build_option_names(space: Any) -> frozenset[str] | None:
    """Keyword options ``space.build`` takes: the space's ``build_options`` where it
    declares them, else the names in its signature; None when it takes any (``**cfg``).
    What the data decides (:func:`network_options`) is filled in only where the space takes it."""
    declared = getattr(space, "build_options", None)
    if declared is not None:
        return frozenset(declared)
    params = inspect.signature(space.build).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)

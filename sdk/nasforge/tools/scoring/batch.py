"""Turning "which data" into one fixed, hashed batch.

Every architecture of a sweep must see the same batch and the same initialisation seed
(κ and M depend on both: Shu's thesis, Tables 7.10 and 7.11), and the cache must know what that batch was,
so the batch is drawn once here and carries its content hash.
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import torch

from nasforge.kernel.datasets import TensorData, load_dataset
from nasforge.kernel.errors import OptionError
from nasforge.kernel.metric import Batch
from nasforge.kernel.registry import Registry, get_registry

DataSpec = str | TensorData | tuple[torch.Tensor, torch.Tensor]


@attrs.frozen(eq=False)
class FixedBatch:
    """One batch and how it was made."""

    x: torch.Tensor
    y: torch.Tensor
    num_classes: int
    source: str
    seed: int

    @property
    def batch(self) -> Batch:
        return self.x, self.y

    def digest(self) -> str:
        h = hashlib.sha256()
        for t in (self.x, self.y):
            h.update(str(tuple(t.shape)).encode())
            h.update(t.detach().cpu().contiguous().numpy().tobytes())
        return h.hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "batch_size": int(self.x.shape[0]),
            "input_shape": list(self.x.shape[1:]),
            "num_classes": self.num_classes,
            "seed": self.seed,
            "digest": self.digest(),
        }


LABEL_MODES = ("true", "random")


def check_labels(labels: str) -> None:
    """``labels`` is a label mode (checked before a sweep starts anything, a Ray instance too)."""
    if labels not in LABEL_MODES:
        raise OptionError(f"labels must be one of {LABEL_MODES}, got {labels!r}")


def fixed_batch(
    data: DataSpec,
    *,
    batch_size: int = 64,
    seed: int = 0,
    labels: str = "true",
    registry: Registry | None = None,
    **options: Any,
) -> FixedBatch:
    """A reproducible batch from a registered dataset name, a TensorData, or tensors.

    Names resolve through ``registry`` (the process-wide default if None): ``gaussian``,
    ``digits``, ``digits-random-labels``, or a plugin's, loaded with ``seed`` and
    ``options``. ``labels="random"`` replaces the labels by uniform draws (NASI's
    label-agnostic mode) for any data, the user's included.
    """
    if batch_size < 1:
        raise OptionError(f"batch_size must be >= 1, got {batch_size}")
    check_labels(labels)
    fb = _draw(data, batch_size, seed, registry, options)
    if labels == "random":
        gen = torch.Generator().manual_seed(seed + 1)
        y = torch.randint(0, fb.num_classes, fb.y.shape, generator=gen).to(fb.y.device)
        fb = FixedBatch(fb.x, y, fb.num_classes, f"{fb.source}+random-labels", seed)
    return fb


def _draw(
    data: DataSpec, batch_size: int, seed: int, registry: Registry | None, options: dict[str, Any]
) -> FixedBatch:
    if isinstance(data, str):
        registry = registry if registry is not None else get_registry()
        data = load_dataset(data, registry=registry, seed=seed, **options)
    if isinstance(data, TensorData):
        x, y = data.batch(batch_size, seed=seed)
        return FixedBatch(x, y, data.num_classes, data.name, seed)
    x, y = data
    if x.shape[0] != y.shape[0]:
        raise ValueError("inputs and labels differ in length")
    num_classes = int(y.max()) + 1 if y.numel() else 1
    return FixedBatch(x[:batch_size], y[:batch_size], num_classes, "tensors", seed)

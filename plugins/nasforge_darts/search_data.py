"""The two data splits of bilevel search, from whatever the caller has.

DARTS splits the training set in half: weights fit one half, the architecture the other.
``fit`` accepts a :class:`~nasforge.TensorData` (split here, reproducibly; what a run
hands over), an explicit ``(train, val)`` pair, or a dataset name, looked up in the
registry the strategy was made with.
"""

from __future__ import annotations

from typing import Any

from nasforge.kernel.datasets import TensorData, load_dataset
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.registry import Registry, get_registry


def search_splits(
    data: Any, *, train_portion: float, seed: int, registry: Registry | None = None
) -> tuple[TensorData, TensorData]:
    """(weight-training split, architecture split); a dataset name is loaded through
    ``registry`` (the process-wide default if None)."""
    if isinstance(data, str):
        data = load_dataset(data, registry=registry if registry is not None else get_registry(), seed=seed)
    if isinstance(data, tuple) and len(data) == 2 and all(isinstance(d, TensorData) for d in data):
        return data
    if not isinstance(data, TensorData):
        raise NasforgeError(
            "search data must be a TensorData, a (train, val) pair of them, or a dataset name; "
            f"got {type(data).__name__}"
        )
    if len(data) < 2:
        raise NasforgeError("search data needs at least two samples")
    return data.split(train_portion, seed=seed)

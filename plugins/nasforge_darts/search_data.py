"""The two data splits of bilevel search, from whatever the caller has.

DARTS splits the training set in half: weights fit one half, the architecture the other.
``fit`` accepts a :class:`~nasforge.TensorData` (split here, reproducibly), an explicit
``(train, val)`` pair, or a registered dataset name.
"""

from __future__ import annotations

from typing import Any

from nasforge.datasets import TensorData
from nasforge.errors import NasforgeError


def search_splits(data: Any, *, train_portion: float, seed: int) -> tuple[TensorData, TensorData]:
    """(weight-training split, architecture split)."""
    if isinstance(data, str):
        from nasforge.registry import get_registry

        data = get_registry().get("dataset", data).load(seed=seed)
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

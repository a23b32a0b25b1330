"""The data a winner trains on, and the held-out data its accuracy is reported on.

The held-out data is the dataset's own test split where it has one (MNIST-1D's 1,000
test sequences, CIFAR's test batch, ``x_test``/``y_test`` in a user's file, an image
folder's ``test/``), and the network trains on the whole training split: the search
never saw the test split, so the figure is unbiased. Data without a test split (digits,
a file of ``x`` and ``y`` only) gives up a share of itself (``holdout_fraction``, drawn
by the seed) and the network trains on the rest; the search chose the architecture on
a validation split of the same data, so that figure can be a little optimistic, which the
report says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from nasforge.kernel.datasets import FILES_DATASET, TensorData, is_data_path
from nasforge.kernel.errors import NasforgeError, UnknownNameError
from nasforge.kernel.registry import Registry
from nasforge.run.builtin_datasets import DataError, user_data
from nasforge.run.run_data import IN_MEMORY, load_training_data, spec_name


@attrs.frozen(eq=False)
class WinnerData:
    """What to train on and what to report on, and how the two were separated."""

    #: The data as named (a dataset, an absolute path, or ``memory:NAME``).
    name: str
    train: TensorData
    heldout: TensorData
    #: "the test split of mnist1d" or "20 % of digits, held out by seed 0".
    heldout_from: str
    #: Whether the held-out examples are a share of the data (so a search on the same data
    #: may have seen them; the trainer clears it when no search chose on this data).
    heldout_seen_by_search: bool
    #: The digest of the training data as loaded, before a share was held out (what a
    #: run's journal records of the data it searched on).
    loaded_digest: str


def winner_data(
    data: Any, registry: Registry, *, seed: int, holdout_fraction: float, heldout: Any = None
) -> WinnerData:
    """The training and held-out data ``data`` names (a dataset name or path), or holds (a
    :class:`TensorData`, ``(x, y)``, or a mapping with ``x``, ``y`` and optionally
    ``x_test``, ``y_test``, ``num_classes``). ``heldout`` (same forms, data only) replaces
    the test split."""
    if isinstance(data, str):
        name = spec_name(data, registry)
        assert name is not None
        train = load_training_data(name, registry=registry, seed=seed)
        test = _test_split(name, registry, seed)
    else:
        name, train, test = _in_memory(data)
    if heldout is not None:
        _, given, given_test = _in_memory(heldout, where="heldout")
        test = given_test or given
        return _checked(WinnerData(name, train, test, "the held-out data given", False, train.digest()))
    if test is not None:
        return _checked(
            WinnerData(name, train, test, f"the test split of {train.name}", False, train.digest())
        )
    held, rest = train.split(holdout_fraction, seed=seed)
    held = TensorData(f"{train.name}-heldout", held.x, held.y, train.num_classes)
    rest = TensorData(train.name, rest.x, rest.y, train.num_classes)
    note = f"{100 * holdout_fraction:g} % of {train.name}, held out by seed {seed}"
    return _checked(WinnerData(name, rest, held, note, True, train.digest()))


def _test_split(name: str, registry: Registry, seed: int) -> TensorData | None:
    """The dataset's test split, where its source declares one; None else."""
    try:
        source, options = registry.get("dataset", name), {}
    except UnknownNameError:
        if not is_data_path(name):
            raise
        source, options = registry.get("dataset", FILES_DATASET), {"path": name}
    if not getattr(source, "test_split", False):  # declared by the source (DatasetSource.test_split)
        return None
    try:
        test = source.load(seed=seed, train=False, **options)
    except DataError as exc:
        if "no test split" in str(exc):
            return None
        raise
    if not isinstance(test, TensorData):
        raise NasforgeError(f"dataset '{name}' loaded a {type(test).__name__}, not a TensorData")
    return test


def _in_memory(value: Any, *, where: str = "train_data") -> tuple[str, TensorData, TensorData | None]:
    """Data given to the Python API, checked as a data file is."""
    if isinstance(value, TensorData):
        arrays: dict[str, Any] = {"x": value.x, "y": value.y, "num_classes": value.num_classes}
        label = value.name
    elif isinstance(value, Mapping):
        arrays, label = dict(value), "arrays"
    elif isinstance(value, tuple | list) and len(value) == 2:
        arrays, label = {"x": value[0], "y": value[1]}, "arrays"
    else:
        raise DataError(
            f"{where} must be a dataset name, a path, a TensorData, (x, y) or a mapping with x and y; "
            f"got a {type(value).__name__}"
        )
    checked = user_data(arrays, name=label, where=where)
    return IN_MEMORY + label, checked.train, checked.test


def _checked(data: WinnerData) -> WinnerData:
    """The held-out data must fit the network trained on the training data."""
    train, held = data.train, data.heldout
    if held.input_shape != train.input_shape:
        raise DataError(
            f"the held-out samples have shape {held.input_shape}, the training samples {train.input_shape}"
        )
    if int(held.y.max()) >= train.num_classes:
        raise DataError(
            f"the held-out data has label {int(held.y.max())}, outside the {train.num_classes} classes "
            "of the training data"
        )
    if len(train) < 2:
        raise DataError(f"{train.name}: too few examples left to train on ({len(train)})")
    return data

"""A user's own arrays turned into :class:`TensorData`, every way they can be wrong refused.

Tensor files, image folders and the arrays given to the Python API all end here, so one
set of checks decides what a dataset is: inputs ``x`` of real numbers, finite, one row
per sample with at least one feature; integer labels ``y`` in ``0 .. K-1``, one per
sample, at least two classes; optionally a test split ``x_test`` / ``y_test`` of the same
sample shape and classes; optionally ``num_classes`` (K, else the largest label + 1).
What breaks a rule is a :class:`~nasforge.kernel.errors.DataError` in one line that says
where and what, found before a run directory exists, so a bad file never leaves a
half-written run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError

#: The keys a tensor file (or a mapping given to the API) may hold.
REQUIRED_KEYS = ("x", "y")
OPTIONAL_KEYS = ("x_test", "y_test", "num_classes")


class DataError(NasforgeError, ValueError):
    """The user's data cannot be a dataset (one line: where, and what is wrong)."""


@attrs.frozen(eq=False)
class UserData:
    """A user's training data and, when given, its test split (same sample shape and classes)."""

    train: TensorData
    test: TensorData | None = None

    def split(self, train: bool, where: str) -> TensorData:
        """The training split, or the test split (refused in one line when there is none)."""
        if train:
            return self.train
        if self.test is None:
            raise DataError(f"{where}: holds no test split (x_test and y_test)")
        return self.test


def user_data(arrays: Mapping[str, Any], *, name: str, where: str) -> UserData:
    """``arrays`` (``x``, ``y``, optional ``x_test``, ``y_test``, ``num_classes``) checked and
    turned into float32 inputs and int64 labels; ``where`` names them in errors."""
    unknown = sorted(set(arrays) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise DataError(
            f"{where}: unexpected key {unknown[0]!r} (a dataset holds x, y and optionally x_test, y_test, "
            "num_classes)"
        )
    for key in REQUIRED_KEYS:
        if key not in arrays:
            raise DataError(f"{where}: no {key!r} (a dataset holds x, y and optionally x_test, y_test)")
    if ("x_test" in arrays) != ("y_test" in arrays):
        given, missing = ("x_test", "y_test") if "x_test" in arrays else ("y_test", "x_test")
        raise DataError(f"{where}: {given} without {missing}")
    x = _inputs(arrays["x"], f"{where}: x")
    y = _labels(arrays["y"], f"{where}: y")
    _same_length(x, y, where, "x", "y")
    classes = _num_classes(arrays.get("num_classes"), y, where)
    test = None
    if "x_test" in arrays:
        tx = _inputs(arrays["x_test"], f"{where}: x_test")
        ty = _labels(arrays["y_test"], f"{where}: y_test")
        _same_length(tx, ty, where, "x_test", "y_test")
        if tx.shape[1:] != x.shape[1:]:
            raise DataError(
                f"{where}: x_test samples have shape {tuple(tx.shape[1:])}, x samples {tuple(x.shape[1:])}"
            )
        if int(ty.max()) >= classes:
            raise DataError(
                f"{where}: y_test has label {int(ty.max())}, outside the {classes} classes of y "
                f"(0..{classes - 1})"
            )
        test = TensorData(f"{name}-test", tx, ty, classes)
    return UserData(TensorData(name, x, y, classes), test)


def _array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged lists
        raise DataError(f"{what} is not an array ({str(exc).splitlines()[0]})") from None
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise DataError(f"{what} holds {array.dtype} values, not numbers")
    return array


def _inputs(value: Any, what: str) -> torch.Tensor:
    array = _array(value, what)
    if array.ndim < 2:
        raise DataError(f"{what} has shape {array.shape}: expected one row per sample (N x features...)")
    if array.shape[0] == 0:
        raise DataError(f"{what} is empty (no samples)")
    if math.prod(array.shape[1:]) == 0:
        raise DataError(f"{what} has shape {array.shape}: a sample holds no values")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        kind = "NaN" if np.isnan(array).any() else "infinite"
        raise DataError(f"{what} holds {kind} values")
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def _labels(value: Any, what: str) -> torch.Tensor:
    array = _array(value, what)
    if array.ndim != 1:
        raise DataError(
            f"{what} has shape {array.shape}: expected one integer class label per sample (not one-hot)"
        )
    if array.shape[0] == 0:
        raise DataError(f"{what} is empty (no labels)")
    if array.dtype.kind == "f" and not (np.isfinite(array).all() and np.equal(np.mod(array, 1), 0).all()):
        raise DataError(f"{what} holds non-integer labels (class labels are integers 0..K-1)")
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if int(array.min()) < 0:
        raise DataError(f"{what} has label {int(array.min())}: class labels are integers 0..K-1")
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.int64))


def _same_length(x: torch.Tensor, y: torch.Tensor, where: str, xs: str, ys: str) -> None:
    if x.shape[0] != y.shape[0]:
        raise DataError(f"{where}: {xs} has {x.shape[0]} samples but {ys} has {y.shape[0]} labels")


def _num_classes(value: Any, y: torch.Tensor, where: str) -> int:
    largest = int(y.max())
    if value is None:
        classes = largest + 1
    else:
        array = np.asarray(value)
        if array.size != 1 or array.dtype.kind not in "iu":
            raise DataError(
                f"{where}: num_classes must be one integer, got {array.dtype} of shape {array.shape}"
            )
        classes = int(array.reshape(()))
        if largest >= classes:
            raise DataError(
                f"{where}: y has label {largest}, outside num_classes {classes} (0..{classes - 1})"
            )
    present = int(torch.unique(y).numel())
    if present < 2:
        raise DataError(f"{where}: y holds one class only ({largest}); a classifier needs at least two")
    return classes

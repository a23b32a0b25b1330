"""Fixtures shared by the NASI tests: digits and the NAS-Bench-201 space."""

from __future__ import annotations

import pytest

from nasforge.kernel.datasets import TensorData
from nasforge.run.builtin_datasets import load_digits
from nasforge_nb201.space import NB201Space


@pytest.fixture(scope="module")
def digits() -> TensorData:
    return load_digits()


@pytest.fixture(scope="module")
def nb201() -> NB201Space:
    return NB201Space()

"""Fixtures for the NAS-Bench-201 plugin tests.

``shipped_rows`` reads the bundled table with nothing but gzip and csv, independently of
``nasforge_nb201.table``, so the loader is checked against the file and not against itself.
"""

from __future__ import annotations

import csv
import gzip
import io
from importlib import resources

import pytest

from nasforge_nb201 import NB201Space

ACCURACY_COLUMNS = (
    "CIFAR10TestAccuracy200Epochs",
    "CIFAR100TestAccuracy200Epochs",
    "ImageNetTestAccuracy200Epochs",
)


@pytest.fixture(scope="session")
def shipped_rows() -> list[dict[str, str]]:
    data = resources.files("nasforge_nb201").joinpath("data", "nb201.csv.gz").read_bytes()
    text = gzip.decompress(data).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.fixture(scope="session")
def table_strings(shipped_rows: list[dict[str, str]]) -> list[str]:
    return [row["ArchitectureString"] for row in shipped_rows]


@pytest.fixture(scope="session")
def accuracy_columns() -> tuple[str, ...]:
    """CSV columns of cifar10, cifar100 and imagenet16-120, in that order."""
    return ACCURACY_COLUMNS


@pytest.fixture
def space() -> NB201Space:
    return NB201Space()

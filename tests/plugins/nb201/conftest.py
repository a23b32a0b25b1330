"""Fixtures for the NAS-Bench-201 plugin tests.

``shipped_rows`` reads the bundled table with nothing but gzip and csv, and ``csv_column``
spells the CSV's column names out by hand, independently of ``nasforge_nb201.table`` and
``table_bundle``, so the loader is checked against the file and not against itself.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable
from importlib import resources

import pytest

from nasforge_nb201 import NB201Space

SHIPPED_FILE = "nb201_full.csv.gz"
#: Dataset name -> column prefix of the shipped CSV (the source's own spelling).
PREFIXES = {"cifar10": "cifar10", "cifar100": "cifar100", "imagenet16-120": "imagenet16"}
#: Metric name -> column suffix of the shipped CSV.
SUFFIXES = {
    "valid_accuracy": "valid",
    "test_accuracy": "test",
    "train_seconds": "train_seconds",
    "latency_ms": "latency_ms",
    "valid_seeds": "valid_seeds",
}


@pytest.fixture(scope="session")
def shipped_bytes() -> bytes:
    """The shipped file as the installed package holds it."""
    return resources.files("nasforge_nb201").joinpath("data", SHIPPED_FILE).read_bytes()


@pytest.fixture(scope="session")
def shipped_rows(shipped_bytes: bytes) -> list[dict[str, str]]:
    text = gzip.decompress(shipped_bytes).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.fixture(scope="session")
def table_strings(shipped_rows: list[dict[str, str]]) -> list[str]:
    return [row["arch"] for row in shipped_rows]


@pytest.fixture(scope="session")
def csv_column() -> Callable[[str, str], str]:
    """``csv_column(metric, dataset)``: the shipped CSV's column for it (``params_mb`` has one)."""

    def name(metric: str, dataset: str) -> str:
        return "params_mb" if metric == "params_mb" else f"{PREFIXES[dataset]}_{SUFFIXES[metric]}"

    return name


@pytest.fixture
def space() -> NB201Space:
    return NB201Space()

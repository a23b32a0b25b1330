"""The bundled table: optima, lazy loading, lookups, hash, and provenance of the file."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from nasforge.errors import InvalidGenotypeError, NasforgeError, UnknownNameError
from nasforge_nb201 import DATASET_NAMES, load_table
from nasforge_nb201.table import parse_table, read_table_bytes
from nasforge_nb201.table_bundle import bundle_bytes

SOURCE = Path("/work/shared/data/nb201/nats_tss_test_accuracy.csv")


@pytest.mark.parametrize(
    ("dataset", "best"),
    [("cifar10", 94.37), ("cifar100", 73.51), ("imagenet16-120", 47.31), ("ImageNet16-120", 47.31)],
)
def test_optima_are_the_published_ones(dataset: str, best: float) -> None:
    index, acc = load_table().optimum(dataset)
    assert round(acc, 2) == best
    assert load_table().accuracy_of(index, dataset) == acc


def test_every_lookup_matches_the_file(shipped_rows, accuracy_columns) -> None:
    table = load_table()
    assert len(table) == len(shipped_rows) == 15_625
    expected = np.array([[float(r[c]) for c in accuracy_columns] for r in shipped_rows])
    assert np.array_equal(table.accuracy, expected)
    for i in (0, 1, 857, 6111, 9930, 15_624):
        assert table.arch_of(i) == shipped_rows[i]["ArchitectureString"]
        assert table.index_of_arch(shipped_rows[i]["ArchitectureString"]) == i
        for name, col in zip(DATASET_NAMES, accuracy_columns, strict=True):
            assert table.accuracy_of(i, name) == float(shipped_rows[i][col])


def test_codes_and_rows_are_inverse_permutations() -> None:
    table = load_table()
    assert np.array_equal(table.rows[table.codes], np.arange(15_625))
    assert table.codes.dtype == np.int32 and table.accuracy.dtype == np.float64


def test_table_is_cached_and_read_only() -> None:
    table = load_table()
    assert load_table() is table
    with pytest.raises(ValueError):
        table.accuracy[0, 0] = 100.0
    with pytest.raises(ValueError):
        table.column("cifar10")[0] = 100.0


def test_memory_is_small() -> None:
    table = load_table()
    assert table.accuracy.nbytes + table.codes.nbytes + table.rows.nbytes < 600_000


def test_sha256_is_that_of_the_shipped_file() -> None:
    data = resources.files("nasforge_nb201").joinpath("data", "nb201.csv.gz").read_bytes()
    assert load_table().sha256 == hashlib.sha256(data).hexdigest()


def test_unknown_dataset_lists_the_three() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_table().column("cifar-10")
    message = str(info.value)
    assert "did you mean 'cifar10'" in message
    assert "cifar10, cifar100, imagenet16-120" in message


@pytest.mark.parametrize("index", [-1, 15_625])
def test_index_out_of_range(index: int) -> None:
    with pytest.raises(IndexError):
        load_table().accuracy_of(index, "cifar10")


def test_index_of_malformed_arch_raises() -> None:
    with pytest.raises(InvalidGenotypeError):
        load_table().index_of_arch("|none~0|+")


def test_corrupt_files_are_refused() -> None:
    with pytest.raises(NasforgeError, match="gzip"):
        parse_table(b"not gzip")
    text = gzip.decompress(read_table_bytes()).decode()
    truncated = "\n".join(text.splitlines()[:100]) + "\n"
    with pytest.raises(NasforgeError, match="rows, expected 15625"):
        parse_table(gzip.compress(truncated.encode()))
    header, first, *rest = text.splitlines()
    duplicated = "\n".join([header, first, first, *rest[1:]]) + "\n"
    with pytest.raises(NasforgeError, match="twice"):
        parse_table(gzip.compress(duplicated.encode()))


def test_import_and_discovery_do_not_read_the_table() -> None:
    code = (
        "import nasforge, nasforge_nb201\n"
        "from nasforge_nb201 import table\n"
        "r = nasforge.get_registry(refresh=True)\n"
        "s = r.get('space', 'nb201')()\n"
        "e = r.get('evaluator', 'nb201-table')(s, dataset='cifar100')\n"
        "assert not table.is_loaded(), 'table read too early'\n"
        "print('<loading>', flush=True)\n"
        "e.evaluate(s.parse('|none~0|+|none~0|none~1|+|none~0|none~1|none~2|'))\n"
        "assert table.is_loaded()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("<loading>\n")  # loading itself prints nothing


@pytest.mark.skipif(not SOURCE.exists(), reason="benchmark source CSV not present")
def test_shipped_file_is_the_reduced_source() -> None:
    """The bundle is reproducible from the source export (compared after decompression,
    so a different zlib build cannot make this fail)."""
    assert gzip.decompress(bundle_bytes(SOURCE)) == gzip.decompress(read_table_bytes())

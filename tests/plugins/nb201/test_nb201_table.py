"""The bundled table: the data README's checks, lazy loading, lookups, hash, provenance."""

from __future__ import annotations

import csv
import gzip
import hashlib
import subprocess
import sys

import numpy as np
import pytest

from nasforge.kernel.errors import InvalidGenotypeError, NasforgeError, UnknownNameError
from nasforge_nb201 import DATASET_NAMES, load_table
from nasforge_nb201.table import METRICS, PER_DATASET_METRICS, parse_table, protocol_optimum, read_table_bytes
from nasforge_nb201.table_bundle import COLUMNS, bundle_bytes
from tests.peer_files import peer_path

#: The benchmark's source export, beside the checkout (tests marked ``peer``).
SOURCE = ("data", "nb201", "nb201_full.csv")


# --- the checks listed in ../shared/data/nb201/README.md ---------------------------------------
@pytest.mark.parametrize(
    ("dataset", "valid_index", "best_valid", "its_test"),
    [("cifar10", 6111, 91.61, 94.37), ("cifar100", 9930, 73.49, 73.51)],
)
def test_best_validation_cell_and_its_test_accuracy(dataset, valid_index, best_valid, its_test) -> None:
    index, valid, test = protocol_optimum(dataset)
    assert index == valid_index and round(valid, 2) == best_valid and round(test, 2) == its_test


def test_imagenet_best_validation_cell_is_not_the_test_optimum() -> None:
    index, valid, test = protocol_optimum("ImageNet16-120")
    assert index == 10676 and round(valid, 2) == 46.73
    best_test_index, best_test = load_table().optimum("imagenet16-120", "test_accuracy")
    assert best_test_index == 857 and round(best_test, 2) == 47.31
    assert test == load_table().value("test_accuracy", 10676, "imagenet16-120") < best_test


@pytest.mark.parametrize(
    ("dataset", "best"),
    [("cifar10", 94.37), ("cifar100", 73.51), ("imagenet16-120", 47.31), ("ImageNet16-120", 47.31)],
)
def test_test_optima_are_the_published_ones(dataset: str, best: float) -> None:
    index, acc = load_table().optimum(dataset, "test_accuracy")
    assert round(acc, 2) == best
    assert load_table().accuracy_of(index, dataset) == acc  # accuracy_of is the test accuracy


@pytest.mark.parametrize(
    ("dataset", "pearson"), [("cifar10", 0.995), ("cifar100", 0.999), ("imagenet16-120", 0.998)]
)
def test_validation_and_test_columns_correlate_as_documented(dataset: str, pearson: float) -> None:
    """Catches swapped or misaligned columns: valid vs test of one dataset agree closely."""
    table = load_table()
    r = np.corrcoef(table.column("valid_accuracy", dataset), table.column("test_accuracy", dataset))[0, 1]
    assert round(float(r), 3) == pearson


def test_resnet_cell_matches_the_paper() -> None:
    """Index 11472 is the ResNet-like cell: C10 valid/test 90.86/93.91 (paper 90.83/93.97)."""
    table = load_table()
    assert table.arch_of(11472) == (
        "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|skip_connect~0|none~1|skip_connect~2|"
    )
    got = table.objectives(11472, "cifar10")
    assert round(got["valid_accuracy"], 2) == 90.86 and round(got["test_accuracy"], 2) == 93.91


# --- the loader against the file -----------------------------------------------------------------
@pytest.mark.slow
def test_every_number_matches_the_file(shipped_rows, csv_column) -> None:
    table = load_table()
    assert len(table) == len(shipped_rows) == 15_625
    for metric in PER_DATASET_METRICS:
        for d, name in enumerate(DATASET_NAMES):
            expected = np.array([float(r[csv_column(metric, name)]) for r in shipped_rows])
            assert np.array_equal(getattr(table, metric)[:, d], expected), (metric, name)
            assert np.array_equal(table.column(metric, name), expected)
            seeds = np.array([int(r[csv_column("valid_seeds", name)]) for r in shipped_rows])
            assert np.array_equal(table.valid_seeds[:, d], seeds)
    assert np.array_equal(table.params_mb, np.array([float(r["params_mb"]) for r in shipped_rows]))
    for i in (0, 1, 857, 6111, 9930, 10676, 15_624):
        assert table.arch_of(i) == shipped_rows[i]["arch"]
        assert table.index_of_arch(shipped_rows[i]["arch"]) == i
        for name in DATASET_NAMES:
            got = table.objectives(i, name)
            assert list(got) == list(METRICS)
            assert got == {m: float(shipped_rows[i][csv_column(m, name)]) for m in METRICS}


def test_codes_and_rows_are_inverse_permutations() -> None:
    table = load_table()
    assert np.array_equal(table.rows[table.codes], np.arange(15_625))
    assert table.codes.dtype == np.int32 and table.valid_accuracy.dtype == np.float64


def test_table_is_cached_and_read_only() -> None:
    table = load_table()
    assert load_table() is table
    for name in (*PER_DATASET_METRICS, "valid_seeds", "params_mb", "codes", "rows"):
        array = getattr(table, name)
        with pytest.raises(ValueError):
            array.flat[0] = 1
    with pytest.raises(ValueError):
        table.column("test_accuracy", "cifar10")[0] = 100.0


def test_memory_is_small() -> None:
    """Every number of 15,625 cells on three datasets in under 2 MB (1.8 MB: float64 values,
    int8 seed counts, two int32 permutations)."""
    table = load_table()
    assert table.nbytes < 2_000_000
    assert table.valid_seeds.dtype == np.int8


def test_sha256_is_that_of_the_shipped_file(shipped_bytes) -> None:
    assert load_table().sha256 == hashlib.sha256(shipped_bytes).hexdigest()


def test_unknown_dataset_and_metric_list_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_table().column("test_accuracy", "cifar-10")
    message = str(info.value)
    assert "did you mean 'cifar10'" in message
    assert "cifar10, cifar100, imagenet16-120" in message
    with pytest.raises(UnknownNameError, match="did you mean 'valid_accuracy'"):
        load_table().column("valid_acc", "cifar10")


@pytest.mark.parametrize("index", [-1, 15_625])
def test_index_out_of_range(index: int) -> None:
    with pytest.raises(IndexError):
        load_table().accuracy_of(index, "cifar10")
    with pytest.raises(IndexError):
        load_table().objectives(index, "cifar10")


def test_index_of_malformed_arch_raises() -> None:
    with pytest.raises(InvalidGenotypeError):
        load_table().index_of_arch("|none~0|+")


# --- damaged files ---------------------------------------------------------------------------------
def _lines() -> list[str]:
    return gzip.decompress(read_table_bytes()).decode().splitlines()


def _parse(lines: list[str]) -> None:
    parse_table(gzip.compress(("\n".join(lines) + "\n").encode()))


def _with_field(line: str, column: str, value: str) -> str:
    fields = line.split(",")
    fields[COLUMNS.index(column)] = value
    return ",".join(fields)


@pytest.mark.slow
def test_corrupt_files_are_refused() -> None:
    with pytest.raises(NasforgeError, match="gzip"):
        parse_table(b"not gzip")
    header, first, *rest = _lines()
    with pytest.raises(NasforgeError, match="rows, expected 15625"):
        _parse([header, first, *rest[:98]])
    with pytest.raises(NasforgeError, match="twice"):
        _parse([header, first, first, *rest[1:]])
    with pytest.raises(NasforgeError, match="header"):
        _parse([header.replace("cifar10_valid", "cifar10_val"), first, *rest])
    with pytest.raises(NasforgeError, match="row 2 has 18 fields"):
        _parse([header, first, rest[0] + ",1", *rest[1:]])
    with pytest.raises(NasforgeError, match="not a number"):
        _parse([header, _with_field(first, "cifar10_valid", "n/a"), *rest])
    with pytest.raises(NasforgeError, match="valid_accuracy holds values outside"):
        _parse([header, _with_field(first, "cifar100_valid", "nan"), *rest])
    with pytest.raises(NasforgeError, match="train_seconds holds values outside"):
        _parse([header, _with_field(first, "imagenet16_train_seconds", "-1"), *rest])
    with pytest.raises(NasforgeError, match="non-integer"):
        _parse([header, _with_field(first, "cifar10_valid_seeds", "2.5"), *rest])
    with pytest.raises(InvalidGenotypeError):
        _parse([header, _with_field(first, "arch", "|conv~0|+|none~0|none~1|+|none~0|none~1|none~2|"), *rest])


@pytest.mark.slow
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


# --- provenance ----------------------------------------------------------------------------------
@pytest.mark.peer
def test_shipped_file_is_the_reduced_source() -> None:
    """The bundle is reproducible from the source export (compared after decompression,
    so a different zlib build cannot make this fail), and every kept value is the source's
    text, unchanged."""
    source_file = peer_path(*SOURCE)
    shipped = gzip.decompress(read_table_bytes())
    assert gzip.decompress(bundle_bytes(source_file)) == shipped
    with open(source_file, newline="", encoding="utf-8") as fh:
        source = list(csv.DictReader(fh))
    kept = list(csv.DictReader(shipped.decode().splitlines()))
    assert [r["index"] for r in source] == [str(i) for i in range(15_625)]  # what dropping it relies on
    for i in (0, 6111, 15_624):
        assert kept[i] == {c: source[i][c] for c in COLUMNS}


@pytest.mark.peer
def test_bundle_is_deterministic() -> None:
    """A zero mtime and no file name in the gzip header: the same source gives the same bytes."""
    source_file = peer_path(*SOURCE)
    data = bundle_bytes(source_file)
    assert data == bundle_bytes(source_file)
    assert data[4:8] == b"\0\0\0\0" and not data[3] & 0x08  # MTIME zero, no FNAME flag


def test_bundle_refuses_an_index_that_is_not_the_row_order(tmp_path) -> None:
    row = ",".join(["1"] * (len(COLUMNS) - 1) + ["|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"])
    good = tmp_path / "good.csv"
    good.write_text("index," + ",".join(COLUMNS) + "\n0," + row + "\n1," + row + "\n")
    assert gzip.decompress(bundle_bytes(good)).decode().splitlines()[1] == row
    bad = tmp_path / "bad.csv"
    bad.write_text("index," + ",".join(COLUMNS) + "\n0," + row + "\n5," + row + "\n")
    with pytest.raises(ValueError, match="row 1 has index '5'"):
        bundle_bytes(bad)

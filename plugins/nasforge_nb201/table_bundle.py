"""How the shipped ``data/nb201_full.csv.gz`` is made from the benchmark export.

The shipped file is derived data, so the derivation is code: anyone holding the source
CSV (``nb201_full.csv``, see the data README) can regenerate it byte for byte (gzip with
a zero mtime and no file name) and check the sha256 that journals record. Values are
copied as text, never re-formatted, so no float ever changes on the way.

What is kept: per dataset the validation and test accuracy, the recorded training
seconds and latency and the number of seeds behind the validation mean; the parameter
count; and the arch string, last. What is dropped: ``index``, which is the row order (it
is checked to be, so dropping it loses nothing). The arch string cannot be derived from
the index (the benchmark's order is an arbitrary permutation of the cells), so it stays;
an integer code instead would be about 9% smaller but would no longer be a plain
projection of the source.

    python -m nasforge_nb201.table_bundle SOURCE.csv [DEST.csv.gz]
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from pathlib import Path

from nasforge.kernel.files import atomic_write_bytes
from nasforge_nb201.datasets import DATASETS, BenchmarkDataset

#: Per-dataset quantities: (name in nasforge, suffix of the CSV column ``<prefix>_<suffix>``).
PER_DATASET: tuple[tuple[str, str], ...] = (
    ("valid_accuracy", "valid"),
    ("test_accuracy", "test"),
    ("train_seconds", "train_seconds"),
    ("latency_ms", "latency_ms"),
    ("valid_seeds", "valid_seeds"),
)
#: Quantities of the architecture alone (the CIFAR-10 network's size).
SHARED: tuple[str, ...] = ("params_mb",)
ARCH_COLUMN = "arch"
INDEX_COLUMN = "index"
TABLE_FILE = "nb201_full.csv.gz"
DEFAULT_DEST = Path(__file__).parent / "data" / TABLE_FILE


def column_name(dataset: BenchmarkDataset, quantity: str) -> str:
    """The CSV column of ``quantity`` (a name of :data:`PER_DATASET`) on ``dataset``."""
    suffix = dict(PER_DATASET)[quantity]
    return f"{dataset.prefix}_{suffix}"


COLUMNS: tuple[str, ...] = (
    *(column_name(d, q) for d in DATASETS for q, _ in PER_DATASET),
    *SHARED,
    ARCH_COLUMN,
)


def bundle_bytes(source: Path) -> bytes:
    """The gzip bytes of the reduced table built from the benchmark CSV at ``source``."""
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    with open(source, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or ()
        missing = [c for c in COLUMNS if c not in fields]
        if missing:
            raise ValueError(f"{source} lacks column(s) {missing}")
        for position, row in enumerate(reader):
            if INDEX_COLUMN in fields and row[INDEX_COLUMN] != str(position):
                raise ValueError(
                    f"{source} row {position} has index {row[INDEX_COLUMN]!r}: the bundle drops the "
                    "index column because it must equal the row order"
                )
            writer.writerow([row[c] for c in COLUMNS])
    raw = text.getvalue().encode("utf-8")
    return gzip.compress(raw, compresslevel=9, mtime=0)


def write_bundle(source: Path, dest: Path = DEFAULT_DEST) -> Path:
    """Write the reduced, gzipped table to ``dest`` and return it.

    The shipped table is read by every benchmark lookup, so it is replaced atomically:
    a failed regeneration leaves the previous table, never a truncated one.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(dest, bundle_bytes(source))
    return dest


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    args = sys.argv[1:]
    if not 1 <= len(args) <= 2:
        sys.exit("usage: python -m nasforge_nb201.table_bundle SOURCE.csv [DEST.csv.gz]")
    write_bundle(Path(args[0]), Path(args[1]) if len(args) == 2 else DEFAULT_DEST)

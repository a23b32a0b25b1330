"""How the shipped ``data/nb201.csv.gz`` is made from the benchmark export.

The shipped file is derived data, so the derivation is code: anyone holding the source
CSV can regenerate it byte for byte (gzip with a zero mtime and no file name) and check
the sha256 that journals record. Only the three accuracy columns and the arch string are
kept; the isomorphism string is dropped because nothing here needs it. Values are copied
as text, never re-formatted, so no float ever changes on the way.

    python -m nasforge_nb201.table_bundle SOURCE.csv [DEST.csv.gz]
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from pathlib import Path

from nasforge.atomic_files import atomic_write_bytes
from nasforge_nb201.datasets import DATASETS

ARCH_COLUMN = "ArchitectureString"
COLUMNS: tuple[str, ...] = (*(d.column for d in DATASETS), ARCH_COLUMN)
DEFAULT_DEST = Path(__file__).parent / "data" / "nb201.csv.gz"


def bundle_bytes(source: Path) -> bytes:
    """The gzip bytes of the reduced table built from the benchmark CSV at ``source``."""
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    with open(source, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{source} lacks column(s) {missing}")
        for row in reader:
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

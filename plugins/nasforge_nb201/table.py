"""The bundled NAS-Bench-201 accuracy table, loaded once per process on first use.

Upstream benchmark APIs are notorious for their cost (the original pickle needed tens of
GB of RAM), so this table is three small numpy arrays: a (15625, 3) float64 accuracy
matrix and two int32 permutations between benchmark row index and the architecture's
integer code (:mod:`nasforge_nb201.arch`). Arch strings are rebuilt from codes on demand
instead of being kept as 15,625 Python strings. Nothing is read at import time: plugin
discovery must stay cheap, and most processes never look a number up.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import threading
from importlib import resources
from typing import Any

import attrs
import numpy as np

from nasforge.errors import NasforgeError
from nasforge_nb201 import arch
from nasforge_nb201.datasets import DATASET_NAMES, benchmark_dataset, dataset_position
from nasforge_nb201.table_bundle import ARCH_COLUMN, COLUMNS

TABLE_FILE = "nb201.csv.gz"


def _frozen_array(dtype: Any, ndim: int) -> Any:
    def check(_inst: Any, attr: attrs.Attribute, value: np.ndarray) -> None:
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != ndim:
            raise TypeError(f"NB201Table.{attr.name} must be a {ndim}-d {dtype} array")
        if value.flags.writeable:
            raise ValueError(f"NB201Table.{attr.name} must be read-only (it is shared)")

    return check


@attrs.frozen(eq=False)
class NB201Table:
    """Test accuracies of all 15,625 cells, indexed by benchmark row (= benchmark index).

    Built by :func:`load_table`; the arrays are read-only because every caller in the
    process shares this one instance.
    """

    #: (15625, 3) test accuracy in percent; columns follow ``datasets.DATASET_NAMES``.
    accuracy: np.ndarray = attrs.field(validator=_frozen_array(np.float64, 2))
    #: Row index -> architecture code.
    codes: np.ndarray = attrs.field(validator=_frozen_array(np.int32, 1))
    #: Architecture code -> row index (the inverse permutation of ``codes``).
    rows: np.ndarray = attrs.field(validator=_frozen_array(np.int32, 1))
    #: sha256 of the shipped gzip file, for journals.
    sha256: str = attrs.field(validator=attrs.validators.matches_re(r"[0-9a-f]{64}"))

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    # --- accuracies ---------------------------------------------------------------
    def column(self, dataset: str) -> np.ndarray:
        """Read-only view of one dataset's accuracies, by row index."""
        return self.accuracy[:, dataset_position(dataset)]

    def accuracy_of(self, index: int, dataset: str) -> float:
        """Test accuracy (percent) of the architecture at benchmark ``index``."""
        return float(self.column(dataset)[self._check_index(index)])

    def optimum(self, dataset: str) -> tuple[int, float]:
        """(row index, accuracy) of the best architecture on ``dataset``."""
        col = self.column(dataset)
        best = int(np.argmax(col))
        return best, float(col[best])

    # --- index <-> architecture -------------------------------------------------------
    def code_of(self, index: int) -> int:
        return int(self.codes[self._check_index(index)])

    def index_of_code(self, code: int) -> int:
        arch.from_code(code)  # range check with the module's message
        return int(self.rows[code])

    def arch_of(self, index: int) -> str:
        """The benchmark string of row ``index``."""
        return arch.to_string(arch.from_code(self.code_of(index)))

    def index_of_arch(self, text: str) -> int:
        """The row index of a benchmark string (raises InvalidGenotypeError if malformed)."""
        return self.index_of_code(arch.to_code(arch.from_string(text)))

    def _check_index(self, index: int) -> int:
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"benchmark index must be an int, got {index!r}")
        if not 0 <= index < len(self):
            raise IndexError(f"benchmark index {index} out of range [0, {len(self)})")
        return int(index)


def parse_table(data: bytes) -> NB201Table:
    """Build a table from the gzip bytes of the shipped CSV; corrupt input raises."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        text = gzip.decompress(data).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise NasforgeError(f"nb201 table is not a readable gzip CSV: {exc}") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise NasforgeError(f"nb201 table header is {header!r}, expected {list(COLUMNS)}")
    n = arch.SPACE_SIZE
    accuracy = np.empty((n, len(DATASET_NAMES)), dtype=np.float64)
    codes = np.empty(n, dtype=np.int32)
    count = 0
    arch_col = COLUMNS.index(ARCH_COLUMN)
    for count, row in enumerate(reader, start=1):
        if count > n or len(row) != len(COLUMNS):
            raise NasforgeError(f"nb201 table row {count} is malformed or beyond {n} rows")
        accuracy[count - 1] = [float(v) for v in row[:arch_col]]
        codes[count - 1] = arch.to_code(arch.from_string(row[arch_col]))
    if count != n:
        raise NasforgeError(f"nb201 table has {count} rows, expected {n}")
    rows = np.full(n, -1, dtype=np.int32)
    rows[codes] = np.arange(n, dtype=np.int32)
    if (rows < 0).any():
        raise NasforgeError("nb201 table lists some architecture twice")
    for a in (accuracy, codes, rows):
        a.setflags(write=False)
    return NB201Table(accuracy=accuracy, codes=codes, rows=rows, sha256=sha)


def read_table_bytes() -> bytes:
    """The raw bytes of the shipped table file."""
    return resources.files("nasforge_nb201").joinpath("data", TABLE_FILE).read_bytes()


_cached: NB201Table | None = None
_lock = threading.Lock()


def load_table() -> NB201Table:
    """The process-wide table, read and parsed on the first call only (thread-safe)."""
    global _cached
    if _cached is None:
        with _lock:
            if _cached is None:
                _cached = parse_table(read_table_bytes())
    return _cached


def is_loaded() -> bool:
    """Whether this process has read the table yet (lets tests check laziness)."""
    return _cached is not None


def table_sha256() -> str:
    """sha256 of the shipped file, as recorded in journals."""
    return load_table().sha256


def accuracy(index: int, dataset: str) -> float:
    """Shortcut: test accuracy of benchmark row ``index`` on ``dataset``."""
    return load_table().accuracy_of(index, dataset)


def optimum(dataset: str) -> tuple[int, float]:
    """Shortcut: (row index, accuracy) of the best cell on ``dataset``."""
    return load_table().optimum(benchmark_dataset(dataset).name)

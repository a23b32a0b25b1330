"""The bundled NAS-Bench-201 table, loaded once per process on first use.

Upstream benchmark APIs are notorious for their cost (the original pickle needed tens of
GB of RAM), so this table is a few small read-only numpy arrays: per dataset the
200-epoch validation and test accuracy, the recorded training seconds and latency, the
seed count behind the validation mean; the parameter count; and two int32 permutations
between benchmark row index and the architecture's integer code
(:mod:`nasforge_nb201.arch`). Arch strings are rebuilt from codes on demand instead of
being kept as 15,625 Python strings. Nothing is read at import time: plugin discovery
must stay cheap, and most processes never look a number up.

A fact of the data worth knowing: the recorded training seconds are one figure per cell
scaled by the training-set size (CIFAR-100 exactly 2x and ImageNet16-120 6.068x the
CIFAR-10 figure, i.e. 25k / 50k / 151.7k images), so cells rank the same by cost on all
three datasets.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import logging
import threading
import time
from importlib import resources
from typing import Any

import attrs
import numpy as np

from nasforge.kernel.errors import NasforgeError, UnknownNameError
from nasforge_nb201 import arch
from nasforge_nb201.datasets import DATASETS, benchmark_dataset, dataset_position
from nasforge_nb201.table_bundle import ARCH_COLUMN, COLUMNS, PER_DATASET, SHARED, TABLE_FILE, column_name

logger = logging.getLogger("nasforge.nb201")

#: The numbers every lookup returns: per dataset, then of the architecture alone.
PER_DATASET_METRICS: tuple[str, ...] = ("valid_accuracy", "test_accuracy", "train_seconds", "latency_ms")
METRICS: tuple[str, ...] = (*PER_DATASET_METRICS, *SHARED)
#: Whether a larger value is better, per metric (the direction :meth:`NB201Table.optimum` takes).
HIGHER_IS_BETTER: dict[str, bool] = {
    "valid_accuracy": True,
    "test_accuracy": True,
    "train_seconds": False,
    "latency_ms": False,
    "params_mb": False,
}
_N = arch.SPACE_SIZE
_ND = len(DATASETS)


def _frozen_array(dtype: Any, shape: tuple[int, ...]) -> Any:
    def check(_inst: Any, attr: attrs.Attribute, value: np.ndarray) -> None:
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.shape != shape:
            raise TypeError(f"NB201Table.{attr.name} must be a {shape} {np.dtype(dtype)} array")
        if value.flags.writeable:
            raise ValueError(f"NB201Table.{attr.name} must be read-only (it is shared)")

    return check


@attrs.frozen(eq=False)
class NB201Table:
    """Every recorded number of all 15,625 cells, indexed by benchmark row (= benchmark index).

    Per-dataset arrays are (15625, 3) with columns in ``datasets.DATASET_NAMES`` order.
    Built by :func:`load_table`; the arrays are read-only because every caller in the
    process shares this one instance.
    """

    #: 200-epoch validation accuracy (percent), mean over ``valid_seeds`` runs: what a search observes.
    valid_accuracy: np.ndarray = attrs.field(validator=_frozen_array(np.float64, (_N, _ND)), repr=False)
    #: 200-epoch test accuracy (percent): what a search reports for the cell it chose.
    test_accuracy: np.ndarray = attrs.field(validator=_frozen_array(np.float64, (_N, _ND)), repr=False)
    #: The benchmark's recorded wall seconds of the 200-epoch training run: what a query costs.
    train_seconds: np.ndarray = attrs.field(validator=_frozen_array(np.float64, (_N, _ND)), repr=False)
    #: The benchmark's recorded inference latency (ms per batch, its own hardware).
    latency_ms: np.ndarray = attrs.field(validator=_frozen_array(np.float64, (_N, _ND)), repr=False)
    #: How many seed runs each validation mean covers (2 or 3).
    valid_seeds: np.ndarray = attrs.field(validator=_frozen_array(np.int8, (_N, _ND)), repr=False)
    #: Parameters in millions (CIFAR-10 head).
    params_mb: np.ndarray = attrs.field(validator=_frozen_array(np.float64, (_N,)), repr=False)
    #: Row index -> architecture code.
    codes: np.ndarray = attrs.field(validator=_frozen_array(np.int32, (_N,)), repr=False)
    #: Architecture code -> row index (the inverse permutation of ``codes``).
    rows: np.ndarray = attrs.field(validator=_frozen_array(np.int32, (_N,)), repr=False)
    #: sha256 of the shipped gzip file, for journals.
    sha256: str = attrs.field(validator=attrs.validators.matches_re(r"[0-9a-f]{64}"))

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (what a process pays for having loaded the table)."""
        return sum(getattr(self, a.name).nbytes for a in attrs.fields(NB201Table) if a.name != "sha256")

    # --- numbers ----------------------------------------------------------------------
    def column(self, metric: str, dataset: str) -> np.ndarray:
        """Read-only view of one metric on one dataset, by row index.

        ``params_mb`` belongs to the architecture, so any of the three datasets gives it.
        """
        position = dataset_position(dataset)
        if metric in PER_DATASET_METRICS:
            return getattr(self, metric)[:, position]
        if metric in SHARED:
            return self.params_mb
        raise UnknownNameError("nb201 table metric", str(metric), METRICS)

    def value(self, metric: str, index: int, dataset: str) -> float:
        """One recorded number of the cell at benchmark ``index``."""
        return float(self.column(metric, dataset)[self._check_index(index)])

    def objectives(self, index: int, dataset: str) -> dict[str, float]:
        """Every metric of the cell at ``index`` on ``dataset``, keyed by :data:`METRICS` name."""
        row, position = self._check_index(index), dataset_position(dataset)
        out = {m: float(getattr(self, m)[row, position]) for m in PER_DATASET_METRICS}
        out["params_mb"] = float(self.params_mb[row])
        return out

    def accuracy_of(self, index: int, dataset: str) -> float:
        """Test accuracy (percent) of the cell at ``index``: the number a report quotes for a
        cell chosen by other means (a derived one-shot cell, a training-free pick)."""
        return self.value("test_accuracy", index, dataset)

    def optimum(self, dataset: str, metric: str) -> tuple[int, float]:
        """(row index, value) of the best cell by ``metric`` (max for accuracies, min for
        costs; the lowest index on ties)."""
        col = self.column(metric, dataset)
        best = int(np.argmax(col) if HIGHER_IS_BETTER[metric] else np.argmin(col))
        return best, float(col[best])

    # --- index <-> architecture ---------------------------------------------------------
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


def _node_codes() -> tuple[dict[str, int], ...]:
    """Per node of the cell, its canonical ``|op~0|...|`` text -> its share of the code.

    Parsing 15,625 strings through :func:`arch.from_string` dominated the load time; 155
    precomputed node texts give the same strict answer (anything else is not in a dict and
    goes to ``from_string`` for its error message) several times faster.
    """
    tables = []
    for dst in range(1, arch.NUM_NODES):
        edges = [e for e, (d, _src) in enumerate(arch.EDGES) if d == dst]
        table = {}
        for ops in itertools.product(range(arch.NUM_OPS), repeat=len(edges)):
            pairs = list(zip(ops, edges, strict=True))
            text = "|" + "|".join(f"{arch.OP_NAMES[o]}~{arch.EDGES[e][1]}" for o, e in pairs) + "|"
            table[text] = sum(o * arch.NUM_OPS ** (arch.NUM_EDGES - 1 - e) for o, e in pairs)
        tables.append(table)
    return tuple(tables)


def _code(text: str, nodes: tuple[dict[str, int], ...]) -> int:
    parts = text.split("+")
    try:
        if len(parts) == len(nodes):
            return sum(table[part] for table, part in zip(nodes, parts, strict=True))
    except KeyError:
        pass
    # Not canonical node texts: from_string raises its one-line InvalidGenotypeError (or
    # accepts the string after stripping surrounding whitespace, as everywhere else).
    return arch.to_code(arch.from_string(text))


def parse_table(data: bytes) -> NB201Table:
    """Build a table from the gzip bytes of the shipped CSV; corrupt input raises.

    The numbers go through numpy's C parser (``loadtxt``) rather than ``csv`` plus
    ``float()``: that keeps the load near 0.1 s and the transient memory near the size of
    the text, with five times the numbers of the old test-only table. The format is our
    own (:mod:`~nasforge_nb201.table_bundle`: no quoting, the arch string last), which is
    what makes splitting on commas safe; every row's field count is still checked.
    """
    sha = hashlib.sha256(data).hexdigest()
    try:
        text = gzip.decompress(data).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise NasforgeError(f"nb201 table is not a readable gzip CSV: {exc}") from exc
    lines = text.split("\n")
    del text
    if lines and lines[-1] == "":
        lines.pop()
    header = lines[0].split(",") if lines else None
    if header is None or tuple(header) != COLUMNS:
        raise NasforgeError(f"nb201 table header is {header!r}, expected {list(COLUMNS)}")
    body = lines[1:]
    del lines
    if len(body) != _N:
        raise NasforgeError(f"nb201 table has {len(body)} rows, expected {_N}")
    commas = len(COLUMNS) - 1
    for number, line in enumerate(body, start=1):
        if line.count(",") != commas:
            raise NasforgeError(
                f"nb201 table row {number} has {line.count(',') + 1} fields, expected {len(COLUMNS)}"
            )
    arch_col = COLUMNS.index(ARCH_COLUMN)
    if arch_col != len(COLUMNS) - 1:  # pragma: no cover - a bundle-format change must update this
        raise NasforgeError("nb201 table format: the arch string must be the last column")
    try:
        numbers = np.loadtxt(body, delimiter=",", usecols=range(arch_col), dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise NasforgeError(f"nb201 table holds a value that is not a number: {exc}") from exc
    nodes = _node_codes()
    codes = np.fromiter((_code(line.rpartition(",")[2], nodes) for line in body), dtype=np.int32, count=_N)
    del body
    rows = np.full(_N, -1, dtype=np.int32)
    rows[codes] = np.arange(_N, dtype=np.int32)
    if (rows < 0).any():
        raise NasforgeError("nb201 table lists some architecture twice")
    arrays = _split_columns(numbers)
    for a in (*arrays.values(), codes, rows):
        a.setflags(write=False)
    return NB201Table(**arrays, codes=codes, rows=rows, sha256=sha)


def _split_columns(numbers: np.ndarray) -> dict[str, np.ndarray]:
    """The numeric block of the CSV as the table's named arrays, each checked for sense.

    A value outside its range means a damaged or mis-built bundle; refusing it here keeps a
    NaN from ever ranking as a search's best.
    """
    where = {c: k for k, c in enumerate(COLUMNS)}
    out: dict[str, np.ndarray] = {}
    for quantity, _suffix in PER_DATASET:
        picked = [where[column_name(d, quantity)] for d in DATASETS]
        out[quantity] = np.ascontiguousarray(numbers[:, picked])
    out["params_mb"] = np.ascontiguousarray(numbers[:, where["params_mb"]])
    bounds = {
        "valid_accuracy": (0.0, 100.0),
        "test_accuracy": (0.0, 100.0),
        "train_seconds": (0.0, np.inf),
        "latency_ms": (0.0, np.inf),
        "valid_seeds": (1.0, 127.0),
        "params_mb": (0.0, np.inf),
    }
    for name, (low, high) in bounds.items():
        values = out[name]
        if not (np.isfinite(values).all() and (values >= low).all() and (values <= high).all()):
            raise NasforgeError(f"nb201 table column {name} holds values outside [{low}, {high}]")
    seeds = out["valid_seeds"]
    if (seeds != np.round(seeds)).any():
        raise NasforgeError("nb201 table column valid_seeds holds non-integer counts")
    out["valid_seeds"] = seeds.astype(np.int8)
    return out


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
                start = time.perf_counter()
                table = parse_table(read_table_bytes())
                logger.debug(
                    "loaded %s (%d cells, %.1f MB of arrays) in %.3f s",
                    TABLE_FILE,
                    len(table),
                    table.nbytes / 1e6,
                    time.perf_counter() - start,
                )
                _cached = table
    return _cached


def is_loaded() -> bool:
    """Whether this process has read the table yet (lets tests check laziness)."""
    return _cached is not None


def table_sha256() -> str:
    """sha256 of the shipped file, as recorded in journals."""
    return load_table().sha256


def accuracy(index: int, dataset: str) -> float:
    """Shortcut: test accuracy of benchmark row ``index`` on ``dataset`` (see ``accuracy_of``)."""
    return load_table().accuracy_of(index, dataset)


def optimum(dataset: str, metric: str) -> tuple[int, float]:
    """Shortcut: (row index, value) of the best cell on ``dataset`` by ``metric``."""
    return load_table().optimum(benchmark_dataset(dataset).name, metric)


def protocol_optimum(dataset: str) -> tuple[int, float, float]:
    """(index, validation accuracy, test accuracy) of the best cell by validation.

    What a search under the benchmark protocol reports once it has found the best
    validation cell. Not a bound: where that cell is not the test optimum (ImageNet16-120)
    a search that stops at a slightly worse validation cell can report more.
    """
    index, valid = optimum(dataset, "valid_accuracy")
    return index, valid, load_table().value("test_accuracy", index, dataset)

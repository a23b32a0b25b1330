"""A disk cache of ONNX latencies that only serves numbers this machine would measure now.

Exporting and timing a network costs a fraction of a second to a few seconds, and a
search meets the same cell again (resumes, reruns, other strategies on the same space),
so measurements are kept. A latency depends on far more than the genotype, and a key that
leaves something out serves a stale number silently, forever, so the key holds all of it:

* the space (name and declared version), the genotype's canonical text, the build
  options and the input shape (batch included): what network runs on what input;
* the protocol: warm-up and timed runs, threads, opset, and :data:`METHOD_VERSION`
  (bumped when the measuring code changes its numbers);
* the software: onnxruntime, torch (its exporter writes the graph) and nasforge versions;
* the machine: :func:`host_fingerprint` (host name, CPU model, architecture, core count).
  A latency is a property of one machine; a cache in a home directory shared by several
  must not hand one machine's numbers to another.

Records are JSON lines (readable with ``jq``), one shard per key, each record carrying
its key and a checksum, appended through :class:`~nasforge.run.journal_file.JsonLinesAppender`:
appenders in several processes (a process-pool run) serialise on a lock of the file, a
kill mid-write leaves at worst a torn last line that the next append cuts, and a line
that does not parse, belongs to another key or fails its checksum is ignored. Damage
costs a re-measurement, never a crash or a wrong number; a cache that cannot be written
(read-only, disk full) warns once and the run goes on.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.files import JsonLinesAppender
from nasforge.kernel.option_types import in_range, typed

#: Bump when the measuring code (nasforge.tools.export.latency) changes what it reports.
METHOD_VERSION = "1"


def default_latency_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/nasforge/latency``, else ``~/.cache/nasforge/latency``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nasforge" / "latency"


def nasforge_version() -> str:
    """The installed nasforge's version, part of every key.

    Read from the package metadata rather than ``nasforge.__version__``: this module sits
    below the registry (the short-train evaluator uses it), so it never imports the
    ``nasforge`` package namespace itself.
    """
    try:
        return metadata.version("nasforge")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@functools.cache
def host_fingerprint() -> dict[str, str]:
    """What makes this machine's latencies its own, readable (the journal records it)."""
    return {
        "node": platform.node(),
        "machine": platform.machine(),
        "system": platform.system(),
        "cpu": _cpu_model(),
        "cpus": str(os.cpu_count() or 0),
    }


def host_id() -> str:
    """A short digest of :func:`host_fingerprint`, for keys."""
    text = json.dumps(host_fingerprint(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@attrs.frozen
class LatencyKey:
    """Everything a cached latency depends on besides the genotype (module docstring)."""

    space: str = attrs.field(validator=[typed, attrs.validators.min_len(1)])
    space_version: str = attrs.field(validator=typed)
    #: The build options as canonical JSON.
    build: str = attrs.field(validator=typed)
    input_shape: tuple[int, ...] = attrs.field(converter=tuple)
    warmup: int = attrs.field(validator=[typed, in_range(ge=0)])
    repeats: int = attrs.field(validator=[typed, in_range(ge=1)])
    threads: int = attrs.field(validator=[typed, in_range(ge=1)])
    opset: int = attrs.field(validator=[typed, in_range(ge=1)])
    onnxruntime: str = attrs.field(validator=typed)
    torch: str = attrs.field(validator=typed)
    package: str = attrs.field(factory=nasforge_version, validator=typed)
    host: str = attrs.field(factory=host_id, validator=typed)
    method: str = attrs.field(default=METHOD_VERSION, validator=typed)

    @staticmethod
    def build_text(options: dict[str, Any] | None) -> str:
        """Build options as the canonical JSON a key holds (key order does not matter)."""
        return _canonical(dict(options or {}))

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = list(self.input_shape)
        return data

    def shard(self) -> str:
        """The file this key's records live in: ``<space>-<digest of the key>.jsonl``."""
        digest = hashlib.sha256(_canonical(self.to_json()).encode()).hexdigest()[:16]
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.space)[:40]
        return f"{safe}-{digest}.jsonl"


def _checksum(genotype: str, key: dict[str, Any], value: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical([genotype, key, value]).encode()).hexdigest()[:16]


def _parse(line: str, key: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(genotype, measurement JSON)`` of one intact record of ``key``, else None."""
    try:
        rec = json.loads(line)
        genotype, value = rec["genotype"], rec["latency"]
        if not isinstance(genotype, str) or not isinstance(value, dict) or rec["key"] != key:
            return None
        if rec["check"] != _checksum(genotype, key, value):
            return None
        return genotype, value
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


class LatencyCache:
    """Latency measurements on disk under ``directory``, by :class:`LatencyKey` and genotype text.

    Values are the JSON of a measurement (:meth:`LatencyMeasurement.to_json
    <nasforge.tools.export.latency.LatencyMeasurement.to_json>`); only successful measurements
    are put (a failure may be transient and is retried next time). Safe to share between
    processes; within one, a miss re-reads a shard that changed on disk, so a record
    another worker appended meanwhile is found.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._shards: dict[str, dict[str, dict[str, Any]]] = {}
        self._seen: dict[str, tuple[int, int]] = {}  # shard -> (size, mtime_ns) when last read
        self._warned = False

    def _stat(self, path: Path) -> tuple[int, int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def _table(self, key: LatencyKey, *, refresh: bool = False) -> dict[str, dict[str, Any]]:
        name = key.shard()
        path = self.directory / name
        if name in self._shards and not refresh:
            return self._shards[name]
        stat = self._stat(path)
        if name in self._shards and stat == self._seen.get(name):
            return self._shards[name]
        table = dict(self._shards.get(name, {}))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        wanted = key.to_json()
        for line in text.splitlines():
            parsed = _parse(line, wanted)
            if parsed is not None:
                table[parsed[0]] = parsed[1]
        self._shards[name] = table
        if stat is not None:
            self._seen[name] = stat
        return table

    def get(self, key: LatencyKey, genotype: str) -> dict[str, Any] | None:
        """The measurement JSON recorded for ``genotype`` under ``key``, or None."""
        hit = self._table(key).get(genotype)
        if hit is None:
            hit = self._table(key, refresh=True).get(genotype)
        return None if hit is None else dict(hit)

    def put(self, key: LatencyKey, genotype: str, value: dict[str, Any]) -> None:
        """Record a measurement: in memory at once, on disk as one appended line."""
        self._table(key)[genotype] = dict(value)
        k = key.to_json()
        record = {"genotype": genotype, "key": k, "latency": value, "check": _checksum(genotype, k, value)}
        try:
            with JsonLinesAppender(self.directory / key.shard(), durable=False) as out:
                out.append(record)
        except OSError as exc:  # a cache is an optimisation: the measurement stands
            if not self._warned:
                warnings.warn(
                    f"latency cache {self.directory} not written ({exc}); latencies are not cached",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._warned = True

    def __len__(self) -> int:
        """Number of records on disk (all shards; damaged lines included)."""
        total = 0
        for p in self.directory.glob("*.jsonl") if self.directory.is_dir() else ():
            try:
                total += len(p.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
        return total

"""Benchmark result records keyed by their settings and the code that produced them.

A benchmark appends one JSON line per finished run and skips runs already recorded, so
long benchmarks can be split over several invocations and survive a kill. A record is
only reused when it was made with the same settings *and* the same code: its ``key`` is a
digest of the run's settings and of the source of every package that computes its
numbers (:func:`code_version`). Editing a metric, a strategy or the table evaluator
therefore re-runs what it affects instead of serving stale numbers; ``--recompute``
ignores every earlier record. Records of other keys stay in the file (history), but are
never reported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nasforge.kernel.files import atomic_write_text


def code_version(*packages: str) -> str:
    """A digest of the ``.py`` sources of ``packages`` (and nasforge's version string).

    Source text, not a release number: a development checkout changes code between
    releases, and that is when stale benchmark numbers are most likely.
    """
    import nasforge

    digest = hashlib.sha256(nasforge.__version__.encode())
    for package in sorted(set(packages)):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"not an importable package: {package}")
        for root in spec.submodule_search_locations:
            for path in sorted(Path(root).rglob("*.py")):
                digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def settings_key(settings: dict[str, Any], code: str) -> str:
    """The key of a record: its settings (canonical JSON) and the code version."""
    text = json.dumps({"settings": settings, "code": code}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RecordFile:
    """JSON-lines records of one benchmark; only those of the current code are visible."""

    def __init__(self, path: Path, code: str, *, recompute: bool = False) -> None:
        self.path, self.code, self.recompute = path, code, recompute
        self._started: set[str] = set()  # keys written by this invocation (kept under recompute)

    def _lines(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a foreign or damaged line is not a result
            if isinstance(record, dict):
                out.append(record)
        return out

    def key(self, settings: dict[str, Any]) -> str:
        return settings_key(settings, self.code)

    def records(self, settings: Iterable[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Records made by the current code (with one of ``settings``, if given); of several
        with one key (a ``--recompute``), the latest."""
        keys = None if settings is None else {self.key(s) for s in settings}
        found: dict[str, dict[str, Any]] = {}
        for record in self._lines():
            key = record.get("key")
            if record.get("code") != self.code or not isinstance(key, str):
                continue
            if self.recompute and key not in self._started:
                continue
            if keys is None or key in keys:
                found.pop(key, None)
                found[key] = record
        return list(found.values())

    def has(self, settings: dict[str, Any]) -> bool:
        return bool(self.records([settings]))

    def append(self, settings: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        """Add ``record`` (made with ``settings``); the file is rewritten whole and renamed,
        so a kill mid-write never leaves a torn last line."""
        key = self.key(settings)
        full = {**record, "settings": settings, "code": self.code, "key": key}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        earlier = self.path.read_text() if self.path.exists() else ""
        atomic_write_text(self.path, earlier + json.dumps(full) + "\n")
        self._started.add(key)
        return full


def run_and_record(files: dict[str, RecordFile], settings: dict[str, Any], run: Any, *args: Any) -> None:
    """Run ``run(*args)`` unless the current code already recorded ``settings``; the file is
    the one of ``settings["method"]`` (each method keys its records by its own code)."""
    file = files[settings["method"]]
    if file.has(settings):
        return
    record = file.append(settings, run(*args))
    print(json.dumps({k: v for k, v in record.items() if k != "settings"}), flush=True)

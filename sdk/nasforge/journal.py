"""The append-only run journal: one JSON object a line, fsync'd after every write.

It is the single source of truth of a run. A process killed at any instant leaves at
worst one torn final line, which reading drops; every line before it is a finished
trial, so a resume neither loses nor repeats work.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nasforge.errors import JournalError
from nasforge.result import Trial

FILENAME = "journal.jsonl"
FORMAT = "nasforge-journal/1"


def journal_path(run_dir: str | os.PathLike[str]) -> Path:
    return Path(run_dir) / FILENAME


class JournalWriter:
    """Appends records durably (write, flush, fsync)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held for the run

    def append(self, record: dict[str, Any]) -> None:
        self._fh.write(json.dumps(record, sort_keys=True, allow_nan=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def header(self, header: dict[str, Any]) -> None:
        self.append({"type": "header", "format": FORMAT, **header})

    def trial(self, trial: Trial) -> None:
        self.append({"type": "trial", **trial.to_json()})

    def end(self, summary: dict[str, Any]) -> None:
        self.append({"type": "end", **summary})

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError as exc:
        raise JournalError(f"no journal at {path}") from exc
    except UnicodeDecodeError as exc:
        raise JournalError(f"{path} is not a nasforge journal (not UTF-8 text)") from exc
    # A kill can tear only the last line (it has no newline yet): drop it silently.
    complete, last = lines[:-1], lines[-1]
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JournalError(f"{path}:{number}: corrupt journal line ({exc.msg})") from exc
        if not isinstance(record, dict) or "type" not in record:
            raise JournalError(f"{path}:{number}: not a journal record")
        yield record
    if last.strip():
        try:
            record = json.loads(last)
        except json.JSONDecodeError:
            return
        if isinstance(record, dict) and "type" in record:
            yield record


class JournalReader:
    """The header, finished trials and (if the run ended) the end record of a journal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        records = list(_records(path))
        if not records or records[0].get("type") != "header":
            raise JournalError(f"{path} does not start with a nasforge journal header")
        if records[0].get("format") != FORMAT:
            raise JournalError(f"{path}: unsupported journal format {records[0].get('format')!r}")
        self.header: dict[str, Any] = records[0]
        self.trials: list[Trial] = []
        self.end: dict[str, Any] | None = None
        for record in records[1:]:
            if record["type"] == "trial":
                try:
                    self.trials.append(Trial.from_json(record))
                except (KeyError, TypeError, ValueError) as exc:
                    raise JournalError(f"{path}: malformed trial record ({exc})") from exc
            elif record["type"] == "end":
                self.end = record
        for expected, trial in enumerate(self.trials):
            if trial.index != expected:
                raise JournalError(f"{path}: trial {trial.index} found where {expected} was expected")

    @classmethod
    def of_run(cls, run_dir: str | os.PathLike[str]) -> JournalReader:
        return cls(journal_path(run_dir))

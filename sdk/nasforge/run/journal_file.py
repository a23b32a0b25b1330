"""The append-only run journal: one JSON object a line, fsync'd after every write.

It is the single source of truth of a run. A process killed at any instant leaves at
worst one torn final line, which reading drops; every line before it is a finished
trial, so a resume neither loses nor repeats work.

Writing keeps that promise across kills and full disks (:class:`JsonLinesAppender`):
a torn tail is cut (and saved aside) before anything is appended after it, and a write
that fails part-way is cut back, so no record is ever glued onto a fragment. Each trial
record carries a checksum of what a replay feeds back (genotype, result, wall seconds),
so an edited or corrupted result is refused instead of replayed.

Named for the file it reads and writes; a run's hold on its directory (the lock, this
file opened for appending, a clean exit) is :mod:`nasforge.run.run_directory`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from nasforge.kernel.errors import JournalError
from nasforge.kernel.files import JsonLinesAppender
from nasforge.kernel.result import Trial
from nasforge.run.advice import advised, resume_advice

FILENAME = "journal.jsonl"
FORMAT = "nasforge-journal/1"
#: Header key declaring that every trial record carries a checksum (its value: the algorithm).
#: Journals written before checksums lack it and still read; a checksum present is always checked.
CHECKSUM_DECLARATION = "trial_checksum"
CHECKSUM_ALGORITHM = "sha256"
CHECKSUM_KEY = "checksum"
#: Header key declaring that the end record carries a checksum too: for an ensemble run it
#: is the only record of the members, and for any run it names the best and the front.
END_CHECKSUM_DECLARATION = "end_checksum"
#: What a trial's checksum covers: what a replay feeds back, not the index, which the
#: reader checks by sequence (so the checksum stays valid wherever the record sits); a
#: trial's fidelity too, where it has one (records without one keep their checksums).
_CHECKSUMMED = ("genotype", "result", "wall_seconds")
#: Trial record key of an asynchronous run: the trial's place in the order the strategy
#: asked (its ``index`` is its place in the order results were told). Replay needs both
#: to tell the strategy the same results between the same asks.
ASKED_KEY = "asked"


def journal_path(run_dir: str | os.PathLike[str]) -> Path:
    return Path(run_dir) / FILENAME


def trial_checksum(record: Mapping[str, Any]) -> str:
    """sha256 of a trial record's canonical JSON (sorted keys, no spaces), as hex."""
    payload = {key: record.get(key) for key in _CHECKSUMMED}
    if record.get("fidelity") is not None:  # covered when present; older records lack it
        payload["fidelity"] = record["fidelity"]
    if record.get(ASKED_KEY) is not None:  # an asynchronous run's ask order (replayed too)
        payload[ASKED_KEY] = record[ASKED_KEY]
    text = json.dumps(payload, sort_keys=True, allow_nan=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def end_checksum(record: Mapping[str, Any]) -> str:
    """sha256 of an end record's canonical JSON, its checksum left out, as hex."""
    payload = {key: value for key, value in record.items() if key != CHECKSUM_KEY}
    text = json.dumps(payload, sort_keys=True, allow_nan=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- writing ------------------------------------------------------------------------------
class JournalWriter:
    """Appends journal records durably; any failure to write is one :class:`JournalError`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._out = JsonLinesAppender(path, durable=True)
        except OSError as exc:
            raise JournalError(f"cannot write the journal {path}: {exc.strerror or exc}") from exc

    @property
    def saved_fragments(self) -> list[Path]:
        """Where torn last lines found on opening were saved (normally none)."""
        return self._out.saved_fragments

    def append(self, record: dict[str, Any]) -> None:
        try:
            self._out.append(record)
        except OSError as exc:
            python, cli = resume_advice(self.path.parent)
            raise advised(
                JournalError,
                f"cannot append to {self.path}: {exc.strerror or exc} (the journal is intact up to its "
                "last whole record: fix the cause, then {advice})",
                python=python,
                cli=cli,
            ) from exc

    def header(self, header: dict[str, Any]) -> None:
        self.append(
            {
                "type": "header",
                "format": FORMAT,
                **header,
                CHECKSUM_DECLARATION: CHECKSUM_ALGORITHM,
                END_CHECKSUM_DECLARATION: CHECKSUM_ALGORITHM,
            }
        )

    def trial(self, trial: Trial, *, asked: int | None = None) -> None:
        """Append a finished trial; ``asked``: its ask number in an asynchronous run."""
        record = {"type": "trial", **trial.to_json()}
        if asked is not None:
            record[ASKED_KEY] = asked
        record[CHECKSUM_KEY] = trial_checksum(record)
        self.append(record)

    def end(self, summary: dict[str, Any]) -> None:
        record = {"type": "end", **summary}
        record[CHECKSUM_KEY] = end_checksum(record)
        self.append(record)

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- reading ------------------------------------------------------------------------------
def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise JournalError(f"no journal at {path}") from exc
    except IsADirectoryError as exc:
        raise JournalError(f"{path} is a directory, not a journal") from exc
    except UnicodeDecodeError as exc:
        raise JournalError(f"{path} is not a nasforge journal (not UTF-8 text)") from exc
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every whole line; a torn last line is dropped."""
    lines = text.split("\n")
    # A kill can tear only the last line (it has no newline yet): drop it silently.
    complete, last = lines[:-1], lines[-1]
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JournalError(f"{path}:{number}: corrupt journal line ({exc.msg})") from exc
        except RecursionError as exc:
            raise JournalError(f"{path}:{number}: corrupt journal line (nested too deeply)") from exc
        if not isinstance(record, dict) or "type" not in record:
            raise JournalError(f"{path}:{number}: not a journal record")
        yield number, record
    if last.strip():
        try:
            record = json.loads(last)
        except (json.JSONDecodeError, RecursionError):
            return
        if isinstance(record, dict) and "type" in record:
            yield len(lines), record


def _is_unstarted_text(text: str) -> bool:
    """Nothing but whitespace, or one torn first line: the run died before its header."""
    stripped = text.strip()
    return not stripped or ("\n" not in stripped and stripped.startswith("{") and not _parses(stripped))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def is_unstarted(path: Path) -> bool:
    """True when no run has begun at ``path``: no file, an empty one, or a torn header.

    A kill between creating the journal and writing its header leaves such a file; it
    holds no spec to resume, and must not block starting the run again.
    """
    limit = 1 << 20  # a header is a few kB; a file longer than this has begun
    try:
        with open(path, "rb") as fh:
            head = fh.read(limit)
    except FileNotFoundError:
        return True
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(head) == limit:
        return False
    try:
        return _is_unstarted_text(head.decode("utf-8"))
    except UnicodeDecodeError:
        return False


#: Header fields that are JSON objects (or null) when present: a resume reads into them.
HEADER_OBJECTS = ("spec", "space", "evaluator", "objective", "environment")


class JournalReader:
    """The header, finished trials and (if the run ended) the end record of a journal.

    ``end`` is the last record when that is an end record, and ``None`` otherwise: an end
    followed by more trials is stale (the run went on after it) and is not the run's end.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        text = _read_text(path)
        records = list(_records(path, text))
        if not records and _is_unstarted_text(text):
            raise advised(
                JournalError,
                f"{path} is empty: the run was killed before it began; start it again ({{advice}})",
                python=f"nasforge.api.search(..., run_dir={str(path.parent)!r})",
                cli=f"`nasforge search ... --run-dir {path.parent}`",
            )
        if not records or records[0][1].get("type") != "header":
            raise JournalError(f"{path} does not start with a nasforge journal header")
        header = records[0][1]
        if header.get("format") != FORMAT:
            raise JournalError(f"{path}: unsupported journal format {header.get('format')!r}")
        checksummed = header.get(CHECKSUM_DECLARATION)
        if checksummed not in (None, CHECKSUM_ALGORITHM):
            raise JournalError(f"{path}: unsupported trial checksum {checksummed!r}")
        if header.get(END_CHECKSUM_DECLARATION) not in (None, CHECKSUM_ALGORITHM):
            raise JournalError(f"{path}: unsupported end checksum {header[END_CHECKSUM_DECLARATION]!r}")
        for key in HEADER_OBJECTS:
            if header.get(key) is not None and not isinstance(header[key], dict):
                raise JournalError(f"{path}:1: header field '{key}' must be an object, not {header[key]!r}")
        self.header: dict[str, Any] = header
        self.trials: list[Trial] = []
        #: Each trial's ask number (an asynchronous run's; None in a synchronous one's).
        self.asked: list[int | None] = []
        self.end: dict[str, Any] | None = None
        end_line = 0
        for number, record in records[1:]:
            if record["type"] == "trial":
                self._check_sum(number, record, required=checksummed is not None)
                try:
                    self.trials.append(Trial.from_json(record))
                    asked = record.get(ASKED_KEY)
                    self.asked.append(None if asked is None else int(asked))
                except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                    raise JournalError(f"{path}:{number}: malformed trial record ({exc})") from exc
                self.end = None  # an end before this trial was not the run's end
            elif record["type"] == "end":
                self.end, end_line = record, number
        if self.end is not None:  # the run's end (a stale one, trials after it, is not read)
            self._check_end(end_line, self.end, required=header.get(END_CHECKSUM_DECLARATION) is not None)
        for expected, trial in enumerate(self.trials):
            if trial.index != expected:
                raise JournalError(f"{path}: trial {trial.index} found where {expected} was expected")

    def _check_sum(self, number: int, record: dict[str, Any], *, required: bool) -> None:
        recorded = record.pop(CHECKSUM_KEY, None)
        if recorded is None:
            if required:
                raise JournalError(f"{self.path}:{number}: trial record has no checksum (edited?)")
            return
        if recorded != trial_checksum(record):
            raise JournalError(
                f"{self.path}:{number}: trial {record.get('index')} fails its checksum "
                "(the record was edited or corrupted; it will not be replayed)"
            )

    def _check_end(self, number: int, record: dict[str, Any], *, required: bool) -> None:
        recorded = record.pop(CHECKSUM_KEY, None)
        if recorded is None:
            if required:
                raise JournalError(f"{self.path}:{number}: the end record has no checksum (edited?)")
            return
        if recorded != end_checksum(record):
            raise JournalError(
                f"{self.path}:{number}: the end record fails its checksum (it was edited or corrupted; "
                "its best, front and ensemble are not read)"
            )

    @classmethod
    def of_run(cls, run_dir: str | os.PathLike[str]) -> JournalReader:
        return cls(journal_path(run_dir))

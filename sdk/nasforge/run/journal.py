"""The append-only run journal: one JSON object a line, fsync'd after every write.

It is the single source of truth of a run. A process killed at any instant leaves at
worst one torn final line, which reading drops; every line before it is a finished
trial, so a resume neither loses nor repeats work.

Writing keeps that promise across kills and full disks (:class:`JsonLinesAppender`):
a torn tail is cut (and saved aside) before anything is appended after it, and a write
that fails part-way is cut back, so no record is ever glued onto a fragment. Each trial
record carries a checksum of what a replay feeds back (genotype, result, wall seconds),
so an edited or corrupted result is refused instead of replayed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from nasforge.kernel.errors import JournalError
from nasforge.kernel.files import atomic_write_bytes
from nasforge.kernel.result import Trial

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FILENAME = "journal.jsonl"
FORMAT = "nasforge-journal/1"
#: Header key declaring that every trial record carries a checksum (its value: the algorithm).
#: Journals written before checksums lack it and still read; a checksum present is always checked.
CHECKSUM_DECLARATION = "trial_checksum"
CHECKSUM_ALGORITHM = "sha256"
CHECKSUM_KEY = "checksum"
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


# --- writing ------------------------------------------------------------------------------
class JsonLinesAppender:
    """Appends JSON records to a file so that every line on disk is whole.

    Why: a kill or a full disk can leave the last line half-written, and appending after
    it would glue the next record onto the fragment, leaving a file that no reader can
    read again. So before every append the tail is repaired (a fragment is cut, after
    being saved to ``<name>.torn-<time>`` for forensics; a complete record that only
    lacks its newline gets one), and a write that fails part-way (ENOSPC) is cut back to
    where it began. Appenders in several processes serialise on an ``flock`` of the file
    itself, so a shared file (the HNAS pool cache) is safe too.

    ``durable`` fsyncs after every append (the journal); a cache can skip it.
    Raises ``OSError`` as it comes; callers turn it into their own error.
    """

    def __init__(self, path: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.path = Path(path)
        self.durable = durable
        #: Files the torn fragments were saved to (for a note to the user).
        self.saved_fragments: list[Path] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd: int | None = os.open(self.path, flags, 0o644)
        try:
            with self._exclusive():
                self._repair_tail()
        except BaseException:
            self.close()
            raise

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record as one line: all of it reaches the file, or none of it."""
        data = (json.dumps(record, sort_keys=True, allow_nan=True) + "\n").encode("utf-8")
        with self._exclusive():
            self._repair_tail()
            self._write_all_or_nothing(data)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> JsonLinesAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------
    @property
    def fd(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        return self._fd

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _write_all_or_nothing(self, data: bytes) -> None:
        start = os.fstat(self.fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
            if self.durable:
                os.fsync(self.fd)
        except BaseException:
            # A short write (disk full) or a failed fsync: take back what went out, so the
            # file ends on a whole line and the next append cannot glue onto a fragment.
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, start)
            raise

    def _repair_tail(self) -> None:
        size = os.fstat(self.fd).st_size
        if size == 0 or _pread(self.fd, 1, size - 1) == b"\n":
            return
        start = _after_last_newline(self.fd, size)
        tail = _pread(self.fd, size - start, start)
        if _is_whole_record(tail):  # written in full; only its newline is missing
            self._write_all_or_nothing(b"\n")
            return
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}.{time.time_ns() % 1_000_000_000:09d}"
        saved = self.path.with_name(f"{self.path.name}.torn-{stamp}")
        try:
            atomic_write_bytes(saved, tail)
            self.saved_fragments.append(saved)
        except OSError:
            pass  # a full disk: the fragment is an unfinished record, recomputed anyway
        os.ftruncate(self.fd, start)
        if self.durable:
            os.fsync(self.fd)


def _pread(fd: int, size: int, offset: int) -> bytes:
    """``os.pread`` where there is one; a seek and read elsewhere (appends ignore the offset)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, size)  # pragma: no cover


def _after_last_newline(fd: int, size: int, chunk: int = 1 << 16) -> int:
    """The offset just after the file's last newline (0 when it has none)."""
    end = size
    while end > 0:
        begin = max(0, end - chunk)
        found = _pread(fd, end - begin, begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        end = begin
    return 0


def _is_whole_record(data: bytes) -> bool:
    """A JSON object cannot be cut short and stay one, so a parsable tail was written whole."""
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError):
        return False


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
            raise JournalError(
                f"cannot append to {self.path}: {exc.strerror or exc} (the journal is intact up to its "
                f"last whole record: fix the cause, then `nasforge resume {self.path.parent}`)"
            ) from exc

    def header(self, header: dict[str, Any]) -> None:
        self.append({"type": "header", "format": FORMAT, **header, CHECKSUM_DECLARATION: CHECKSUM_ALGORITHM})

    def trial(self, trial: Trial, *, asked: int | None = None) -> None:
        """Append a finished trial; ``asked``: its ask number in an asynchronous run."""
        record = {"type": "trial", **trial.to_json()}
        if asked is not None:
            record[ASKED_KEY] = asked
        record[CHECKSUM_KEY] = trial_checksum(record)
        self.append(record)

    def end(self, summary: dict[str, Any]) -> None:
        self.append({"type": "end", **summary})

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
            raise JournalError(
                f"{path} is empty: the run was killed before it began; start it again "
                f"(`nasforge search ... --run-dir {path.parent}`)"
            )
        if not records or records[0][1].get("type") != "header":
            raise JournalError(f"{path} does not start with a nasforge journal header")
        header = records[0][1]
        if header.get("format") != FORMAT:
            raise JournalError(f"{path}: unsupported journal format {header.get('format')!r}")
        checksummed = header.get(CHECKSUM_DECLARATION)
        if checksummed not in (None, CHECKSUM_ALGORITHM):
            raise JournalError(f"{path}: unsupported trial checksum {checksummed!r}")
        for key in HEADER_OBJECTS:
            if header.get(key) is not None and not isinstance(header[key], dict):
                raise JournalError(f"{path}:1: header field '{key}' must be an object, not {header[key]!r}")
        self.header: dict[str, Any] = header
        self.trials: list[Trial] = []
        #: Each trial's ask number (an asynchronous run's; None in a synchronous one's).
        self.asked: list[int | None] = []
        self.end: dict[str, Any] | None = None
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
                self.end = record
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

    @classmethod
    def of_run(cls, run_dir: str | os.PathLike[str]) -> JournalReader:
        return cls(journal_path(run_dir))

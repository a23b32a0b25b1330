"""Files that appear only when complete, and JSON-lines files whose every line is whole.

A process killed, a full disk or a failed check in the middle of producing a file must
never leave something that looks finished. Every file nasforge produces (exports, plots,
caches, result tables) goes through here: the temporary name lives in the same directory
(so the rename is atomic on POSIX), and on any error it is removed and the target is left
as it was. Files that grow a record at a time (a run's journal, a pool's score cache) are
appended by :class:`JsonLinesAppender`, which never glues a record onto a torn line.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Permissions of produced files: what ``open()`` would give under a usual umask, not the
#: 0600 that ``mkstemp`` uses (exports are meant to be shared).
FILE_MODE = 0o644


def _umasked(mode: int) -> int:
    current = os.umask(0)
    os.umask(current)
    return mode & ~current


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], *, mode: int = FILE_MODE) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    The caller writes the whole file to the yielded path (any writer that takes a path:
    safetensors, ``torch.onnx.export``, ``savefig``). If the body raises, the temporary
    file is deleted and ``target`` is untouched; what a killed writer left beside
    ``target`` is removed first (:func:`remove_stale_parts`).
    """
    target = Path(target)
    remove_stale_parts(target)
    fd, tmp_name = tempfile.mkstemp(prefix=part_prefix(target), suffix=PART_SUFFIX, dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # the data must be on disk before the name is
            os.fsync(fh.fileno())
        os.chmod(tmp, _umasked(mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_directory(target.parent)


#: The suffix of a file being written (``.NAME.PID-XXXX.part`` beside ``NAME``).
PART_SUFFIX = ".part"


def part_prefix(target: Path) -> str:
    """The start of a temporary name for ``target``: hidden, naming it and this process, so
    that a later writer can tell a killed writer's leftover from a live one's file."""
    return f".{target.name}.{os.getpid()}-"


def remove_stale_parts(target: Path) -> list[Path]:
    """Remove the temporaries of ``target`` (and of its temporaries) that a killed process
    left: those whose writer is no longer running on this machine. Returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return removed
    marker = f".{target.name}."
    for path in entries:
        name = path.name
        if not (name.startswith(".") and name.endswith(PART_SUFFIX) and marker in name):
            continue
        pid = name[: -len(PART_SUFFIX)].rsplit(".", 1)[-1].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's live process
    return True


def atomic_write_bytes(target: str | os.PathLike[str], data: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``data`` to ``target`` so that readers see the old file or the whole new one."""
    with atomic_path(target, mode=mode) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(
    target: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", mode: int = FILE_MODE
) -> None:
    atomic_write_bytes(target, text.encode(encoding), mode=mode)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


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


@contextlib.contextmanager
def output_directory(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Create ``directory`` (and missing parents); on error remove those it created, if empty."""
    directory = Path(directory)
    created: list[Path] = []
    probe = directory
    while not probe.exists() and probe != probe.parent:
        created.append(probe)
        probe = probe.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield directory
    except BaseException:
        for path in created:  # deepest first; rmdir refuses a directory that holds anything
            with contextlib.suppress(OSError):
                path.rmdir()
        raise

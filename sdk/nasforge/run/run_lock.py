"""One writer per run directory: an exclusive ``flock`` on ``run.lock`` held for the whole run.

Two processes appending to one journal (two ``resume``, two identical ``search --run-dir``,
a search plus a resume) interleave duplicate trials and leave a journal that can no longer
be replayed, so the second writer is refused at once, with one line naming the holder.

Why ``flock`` rather than a pid file: the kernel drops the lock when the holding process
dies, however it dies (kill -9 included), so a stale lock never blocks the next resume and
there is no pid-reuse guessing. The pid, host and start time written into the file are
only for the refusal message. The file is never deleted: unlinking a lock file races with
a process that has just opened it, and then two processes could each hold "the" lock.

A lock belongs to the open file description, which a ``fork`` shares with the child: a
forked worker (a process pool's) would keep the run locked after its parent was killed.
Every forked child therefore closes the descriptors of the locks its parent holds (closing
a shared descriptor does not release the parent's lock; ``LOCK_UN`` would).

Platforms without ``fcntl`` (Windows) get no lock: the run proceeds as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType

from nasforge.kernel.errors import RunInUseError, RunLockError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "run.lock"

#: Descriptors of the locks this process holds, closed in every forked child.
_HELD: set[int] = set()


def _close_held_in_child() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_held_in_child)


def lock_path(run_dir: str | os.PathLike[str]) -> Path:
    return Path(run_dir) / LOCK_NAME


class RunLock:
    """The exclusive right to write one run directory; use as a context manager."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.path = lock_path(run_dir)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock or raise :class:`RunInUseError` naming the holder; never waits."""
        if self._fd is not None or fcntl is None:
            return self
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except FileExistsError as exc:
            raise RunLockError(f"run directory {self.run_dir} is not a directory") from exc
        except OSError as exc:
            raise RunLockError(f"cannot lock run directory {self.run_dir}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe_holder(fd)
            os.close(fd)
            raise RunInUseError(
                f"run directory {self.run_dir} is in use by {holder}; wait for it to finish "
                "or use another run directory"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise RunLockError(f"cannot lock run directory {self.run_dir}: {exc.strerror or exc}") from exc
        if not _still_named(fd, self.path):  # the holder discarded the run while we opened it
            os.close(fd)
            return self.acquire()
        _HELD.add(fd)
        self._fd = fd
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        with contextlib.suppress(OSError):  # the note is for messages only; the flock is the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        _HELD.discard(fd)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # the next holder's note replaces ours; none is left stale
        os.close(fd)  # closing the last descriptor releases the flock

    def discard(self) -> None:
        """Remove the lock file, then release: for a run that leaves nothing behind.

        Unlinking while holding the lock is what makes this safe: a process that opened the
        old file and locks it after us sees it is no longer the file named ``run.lock``
        (:func:`_still_named`) and locks the new one instead.
        """
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.release()

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _still_named(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (it was not discarded meanwhile)."""
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _describe_holder(fd: int) -> str:
    """'pid 123 on host h (since ...)' from the holder's note, read while it holds the lock."""
    # The holder writes its note right after locking; give it a moment if we came in between.
    for _ in range(20):
        try:
            info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
            return f"pid {int(info['pid'])} on host {info['host']} (since {info['since']})"
        except (OSError, ValueError, KeyError, TypeError):
            time.sleep(0.01)
    return "another process (it left no pid/host note)"

"""A run's hold on its directory: the lock, the journal it appends to, and a clean exit.

Only one process writes a run directory at a time (:mod:`nasforge.run.run_lock`); a run
whose journal has ended is only read, so it can be re-read from read-only media. A new
run that ends before its first trial (refused, interrupted, a budget too small for one
trial) leaves nothing behind that looks like a run.

Named for the directory it holds; the journal file's format, reading and writing are
:mod:`nasforge.run.journal_file`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from nasforge.kernel.result import Trial
from nasforge.run.journal_file import JournalWriter, journal_path
from nasforge.run.replay import Replay
from nasforge.run.run_lock import RunLock


class RunJournal:
    """Opens a run directory for a run (or only reads it), records trials and the end."""

    def __init__(self, run_dir: Path | None, console: Console) -> None:
        self.run_dir = run_dir
        self.console = console
        self.created = run_dir is not None and not run_dir.exists()
        self.lock: RunLock | None = None
        self.writer: JournalWriter | None = None
        self.replay = Replay()

    def open(self, load: Callable[[], Replay], header: Callable[[], dict[str, Any]]) -> Replay:
        """The journal's replay (``load`` reads and checks it); unless the run ended, the
        directory is locked and opened for appending, and a new run gets its header."""
        if self.run_dir is None:
            return self.replay
        self.replay = load()
        if not self.replay.ended:
            # Read again under the lock: what a writer appended before we got it counts.
            self.lock = RunLock(self.run_dir).acquire()
            self.replay = load()
            self.writer = JournalWriter(journal_path(self.run_dir))
            for saved in self.writer.saved_fragments:
                self.console.print(
                    f"[yellow]journal: cut a torn last line (a killed write), saved to {saved}[/]"
                )
            if not self.replay.exists:
                self.writer.header(header())
        return self.replay

    def trial(self, trial: Trial, asked: int | None) -> None:
        if self.writer is not None:
            self.writer.trial(trial, asked=asked)

    def end(self, record: dict[str, Any]) -> None:
        if self.writer is not None:
            self.writer.end(record)

    def close(self, *, told_any: bool) -> None:
        """Release the directory; a new run that told no trial is removed again."""
        if self.writer is not None:
            self.writer.close()
        if self.lock is None:
            return
        if self.writer is not None and not self.replay.exists and not told_any:
            self._discard_empty_run(self.lock)
        self.lock.release()

    def _discard_empty_run(self, lock: RunLock) -> None:
        assert self.run_dir is not None
        with contextlib.suppress(FileNotFoundError):
            journal_path(self.run_dir).unlink()
        lock.discard()
        if self.created:
            with contextlib.suppress(OSError):  # not empty: someone else's files stay
                self.run_dir.rmdir()

"""Progress as log records, for runs that nobody watches on a terminal.

A rich progress bar redraws in place on a terminal; in a log file, a CI job or a pipeline
that captures :mod:`logging` it shows nothing until the run ends. :class:`ProgressLog`
says the same thing as INFO records ("rea on nb201: trial 120/200, best valid_accuracy
91.2, 3.4 s"), at most one every few seconds, so a long run that is not on a terminal
still says what it is doing. It stays silent while a bar is live on a terminal (the bar
already says it), and a library user who configured no logging sees nothing: the
``nasforge`` logger has only a :class:`logging.NullHandler`.

Plugins use it for their own long loops (a pool being scored, a validation sweep).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from rich.console import Console

#: Seconds between two progress records unless ``NASFORGE_PROGRESS_SECONDS`` says otherwise.
DEFAULT_EVERY = 10.0
EVERY_ENV = "NASFORGE_PROGRESS_SECONDS"


def progress_interval() -> float:
    """The seconds between two progress records: ``NASFORGE_PROGRESS_SECONDS`` when it is a
    non-negative number (0 logs every step), else :data:`DEFAULT_EVERY`. A bad value is not
    worth stopping a run for, so it falls back to the default."""
    text = os.environ.get(EVERY_ENV, "").strip()
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_EVERY
    return value if value >= 0 else DEFAULT_EVERY


def bar_is_live(progress: bool, console: Console | None) -> bool:
    """Whether a rich bar shown with ``progress`` on ``console`` redraws where a person sees it.

    Rich draws a bar live only on an interactive terminal; elsewhere it prints the last
    frame when the run ends, which is what the progress records stand in for. A bar
    without a console of its own goes to rich's global console (stdout).
    """
    if not progress:
        return False
    shown_on = console if console is not None else Console()
    return shown_on.is_terminal and not shown_on.is_dumb_terminal


class ProgressLog:
    """Throttled INFO records of a loop's progress: ``"{what}: {unit} {done}/{total}, {detail}, {s} s"``.

    ``update`` logs when ``every`` seconds (default :func:`progress_interval`) have passed
    since the last record (or the start): a run too short to be worth watching logs
    nothing, and a refusal right after the start stays one line on stderr.
    ``finish`` logs the final count of a run that has logged before, so its log ends on
    where it stopped. ``silent`` (a live bar shows the same) turns it all off.
    """

    def __init__(
        self,
        logger: logging.Logger | str,
        what: str,
        total: int | None = None,
        *,
        unit: str = "trial",
        every: float | None = None,
        silent: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.what, self.total, self.unit = what, total, unit
        self.every = progress_interval() if every is None else every
        self.silent = silent
        self.clock = clock
        self.started = self.last = clock()
        self.logged = 0
        self._last_done: int | None = None

    def update(self, done: int, detail: str = "") -> bool:
        """Log ``done`` (steps finished so far) if a record is due; returns whether one was."""
        if self.silent or not self.logger.isEnabledFor(logging.INFO):
            return False
        now = self.clock()
        if now - self.last < self.every:
            return False
        self._emit(done, detail, now)
        return True

    def finish(self, done: int, detail: str = "") -> None:
        """The last count, if this run logged progress before and not already at ``done``."""
        if self.silent or not self.logged or self._last_done == done:
            return
        if self.logger.isEnabledFor(logging.INFO):
            self._emit(done, detail, self.clock())

    def _emit(self, done: int, detail: str, now: float) -> None:
        count = f"{done}/{self.total}" if self.total is not None else str(done)
        parts = [f"{self.unit} {count}", *([detail] if detail else []), f"{now - self.started:.1f} s"]
        self.logger.info("%s: %s", self.what, ", ".join(parts))
        self.last, self.logged, self._last_done = now, self.logged + 1, done

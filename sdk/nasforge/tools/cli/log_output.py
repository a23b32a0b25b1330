"""Where the ``nasforge`` command sends log records: stderr, at INFO unless told otherwise.

The library only emits records (its ``nasforge`` logger has a NullHandler); the command
line is an application, so it installs the handler: rich's on a terminal (aligned, with
times and colours, and drawn above a live progress bar instead of through it), plain
``time level logger: message`` lines anywhere else, where a pipeline or a CI log reads
them. Results stay on stdout and one-line errors are printed by the entry point, so a
handler on stderr changes neither.

The level is INFO, or ``NASFORGE_LOG_LEVEL`` / ``--log-level`` (debug, info, warning,
error), then ``-v/--verbose`` (debug) or ``-q/--quiet`` (warning) before the command, or
a command's own ``--quiet`` (no progress bar, and warnings only).

A search holds its records back until its run starts (:func:`held_until_the_run_starts`):
a refusal found while it sets up (an option its data shows to be wrong, after a slow
load) is then the one line on stderr, and the records are dropped with it; once the run
starts they are shown in order, with the times they were made. On a terminal the latest
held record is shown meanwhile as a transient status line, erased when the hold ends.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

from rich.logging import RichHandler

from nasforge.kernel.errors import NasforgeError
from nasforge.run.run_events import EVENT_KEY
from nasforge.tools.cli.output import err_console

LOGGER = "nasforge"
LEVEL_ENV = "NASFORGE_LOG_LEVEL"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _Installed:
    """The handler this process's CLI added and the logger level it replaced."""

    handler: logging.Handler | None = None
    previous_level: int = logging.NOTSET
    #: A line said just before the next record the handler shows (:func:`say_first`).
    first: str | None = None
    #: Records held back until the run starts (None: not holding), and the terminal's
    #: transient status line showing the latest of them.
    held: list[logging.LogRecord] | None = None
    status: Any = None
    lock = threading.Lock()


def parse_level(text: str) -> int:
    """A level name (any case) as a number; anything else is a one-line error."""
    level = LEVELS.get(text.strip().lower())
    if level is None:
        raise NasforgeError(f"unknown log level {text!r} (choose from {', '.join(LEVELS)})")
    return level


def install(level: int = logging.INFO) -> logging.Handler:
    """Send ``nasforge`` records at ``level`` and above to stderr (replacing an earlier CLI
    handler of this process, so in-process invocations, as the tests make, never stack)."""
    uninstall()
    logger = logging.getLogger(LOGGER)
    handler: logging.Handler
    if err_console.is_terminal and not err_console.is_dumb_terminal:
        handler = RichHandler(
            console=err_console, show_path=False, markup=False, rich_tracebacks=False, log_time_format="[%X]"
        )
    else:
        handler = logging.StreamHandler(sys.stderr)  # the stderr of this invocation
        handler.setFormatter(logging.Formatter(PLAIN_FORMAT, datefmt="%Y-%m-%dT%H:%M:%S"))
    handler.addFilter(_FirstLine(handler))  # first: it sees the run's start record
    handler.addFilter(_not_run_event)
    _Installed.handler, _Installed.previous_level = handler, logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    return handler


def _not_run_event(record: logging.LogRecord) -> bool:
    """Drop a run's start and end records (a library user's log wants them; the command
    prints its own progress bar and report, which say the same)."""
    return not hasattr(record, EVENT_KEY)


class _FirstLine(logging.Filter):
    """Shows the pending first line (:func:`say_first`) just before the first record that
    gets through, so it leads whatever the command says, and a refusal before that (one
    line on stderr) stays alone."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        with _Installed.lock:
            held = _Installed.held
            if held is not None and getattr(record, EVENT_KEY, None) != "start":
                held.append(record)
                _show_status(record)
                return False
        if held is not None:  # the run starts: what was held is shown first
            _end_hold(show=True)
        if getattr(record, EVENT_KEY, None) is not None:
            return True  # the next filter drops it; the first line waits for a shown record
        line, _Installed.first = _Installed.first, None
        if line is not None:
            first = logging.LogRecord("nasforge.cli", logging.INFO, __file__, 0, "%s", (line,), None)
            self.handler.handle(first)
        return True


def _show_status(record: logging.LogRecord) -> None:
    """On a terminal, the held ``record`` as the transient status line."""
    if not isinstance(_Installed.handler, RichHandler):
        return
    text = record.getMessage()
    if _Installed.status is None:
        _Installed.status = err_console.status(text)
        _Installed.status.start()
    else:
        _Installed.status.update(text)


def _end_hold(*, show: bool) -> None:
    """Stop holding records: show them (after the first line) or drop them."""
    with _Installed.lock:
        held, _Installed.held = _Installed.held, None
        status, _Installed.status = _Installed.status, None
    if status is not None:
        status.stop()
    if not show or not held or _Installed.handler is None:
        return
    line, _Installed.first = _Installed.first, None
    if line is not None:
        held.insert(0, logging.LogRecord("nasforge.cli", logging.INFO, __file__, 0, "%s", (line,), None))
    for record in held:
        _Installed.handler.handle(record)


@contextlib.contextmanager
def held_until_the_run_starts() -> Iterator[None]:
    """Hold the CLI's records back while a run sets up: shown when it starts (or when the
    block ends without an error, a run with nothing left to do), dropped with an error
    that ends the command (its one line stands alone). Ctrl-C shows them: the run may
    have started work worth naming. No-op without the CLI's handler."""
    if _Installed.handler is None:
        yield
        return
    with _Installed.lock:
        _Installed.held = []
    try:
        yield
    except KeyboardInterrupt:
        _end_hold(show=True)
        raise
    except BaseException:
        _end_hold(show=False)
        raise
    _end_hold(show=True)


def say_first(line: str | None) -> None:
    """Say ``line`` before the next status message shown (None: not any more). A search
    names its run directory so, as its first line, once it is past every refusal."""
    _Installed.first = line


def set_level(level: int) -> None:
    """The threshold of the installed CLI handler's records (no-op without one: a command
    run outside ``nasforge.tools.cli.main`` leaves a library user's logging alone)."""
    if _Installed.handler is not None:
        logging.getLogger(LOGGER).setLevel(level)


def quieten() -> None:
    """Warnings and errors only (a command's ``--quiet``)."""
    if _Installed.handler is not None:
        logger = logging.getLogger(LOGGER)
        logger.setLevel(max(logger.getEffectiveLevel(), logging.WARNING))


def uninstall() -> None:
    """Remove the CLI's handler and restore the logger's level (the entry point's last step)."""
    if _Installed.handler is None:
        return
    _end_hold(show=False)
    logger = logging.getLogger(LOGGER)
    logger.removeHandler(_Installed.handler)
    logger.setLevel(_Installed.previous_level)
    _Installed.handler = None

"""What a search says of its run directory: where it is journaled (its first line) and, when
Ctrl-C stops it, what was kept and the command that continues it (its last line).

Every search journals under a directory of its own, by default a new one under ``runs/``;
a user who stops it must not have to list ``runs/`` to find what to resume.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import typer

from nasforge.kernel.errors import NasforgeError
from nasforge.tools.cli import log_output

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


def journaled_trials(run_dir: Path) -> int | None:
    """How many finished trials the journal in ``run_dir`` holds (None: no journal yet)."""
    from nasforge.run.journal_file import JournalReader

    try:
        return len(JournalReader.of_run(run_dir).trials)
    except (NasforgeError, OSError):
        return None


def interrupted_line(run_dir: Path) -> str:
    """The line a search stopped by Ctrl-C ends with."""
    trials = journaled_trials(run_dir)
    if trials is None:
        return f"interrupted before {run_dir} held a journal: nothing to resume; start the search again"
    noun = "trial" if trials == 1 else "trials"
    return f"interrupted: {trials} {noun} journaled in {run_dir}; continue with: nasforge resume {run_dir}"


@contextlib.contextmanager
def run_directory_lines(run_dir: Path, *, resumed: bool = False) -> Iterator[None]:
    """Name ``run_dir`` before the search's first status message, and on Ctrl-C end with
    :func:`interrupted_line` and exit status 130."""
    verb = "continuing" if resumed else "journaling to"
    log_output.say_first(f"{verb} {run_dir} (stop with Ctrl-C; nasforge resume {run_dir} continues)")
    try:
        yield
    except KeyboardInterrupt:
        log_output.say_first(None)
        sys.stderr.write(interrupted_line(run_dir) + "\n")
        sys.stderr.flush()
        raise typer.Exit(INTERRUPTED) from None
    finally:
        log_output.say_first(None)

"""A search stopped by Ctrl-C: its first line named the run directory, its last line says
how many trials the journal kept and the command that continues it, the exit status is
130, and the continued run ends where an uninterrupted one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from nasforge import hookimpl
from nasforge.kernel.registry import load_registry

SEARCH = ("search", "--strategy", "rea", "--evaluator", "nb201-table", "--budget-trials", "60", "--seed", "3")


class CtrlC:
    """Sends this process SIGINT (as Ctrl-C does) when trial ``at`` has finished."""

    def __init__(self, at: int) -> None:
        self.at = at

    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Any) -> None:
        if trial.index == self.at:
            os.kill(os.getpid(), signal.SIGINT)


@pytest.fixture
def ctrl_c_interrupts() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt, as in a program started from a terminal. A test
    process started in the background by a non-interactive shell (``pytest &``) inherits
    SIGINT ignored, Python then installs no handler, and Ctrl-C would do nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _as_from_a_terminal() -> None:
    """In a child before it starts: SIGINT back to its default, so Python installs its handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_ctrl_c_names_the_run_and_the_resume_continues_to_the_same_result(
    cli, tmp_path, monkeypatch: pytest.MonkeyPatch, ctrl_c_interrupts: None
) -> None:
    run = tmp_path / "interrupted"
    with_ctrl_c = load_registry(extra_plugins=[CtrlC(at=20)])
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: with_ctrl_c)
    stopped = cli(*SEARCH, "--run-dir", run)
    assert stopped.code == 130
    lines = _lines(stopped.err)
    assert str(run) in lines[0] and "nasforge resume" in lines[0], lines[0]
    assert lines[-1] == f"interrupted: 21 trials journaled in {run}; continue with: nasforge resume {run}"

    monkeypatch.undo()
    resumed = cli("resume", run, "--json", ok=True)
    assert str(run) in _lines(resumed.err)[0]
    whole = cli(*SEARCH, "--run-dir", tmp_path / "whole", "--json", ok=True).json()
    continued = resumed.json()
    assert continued["trials"] == whole["trials"] == 60
    assert continued["best"] == whole["best"] and continued["objectives"] == whole["objectives"]


def test_ctrl_c_before_the_journal_exists_says_there_is_nothing_to_resume(cli, tmp_path, monkeypatch) -> None:
    def ctrl_c(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("nasforge.run.api.run_spec", ctrl_c)
    stopped = cli(*SEARCH, "--run-dir", tmp_path / "never")
    assert stopped.code == 130
    assert _lines(stopped.err) == [
        f"interrupted before {tmp_path / 'never'} held a journal: nothing to resume; start the search again"
    ]


def test_the_first_line_of_a_search_names_its_run_directory(cli) -> None:
    """Also where the command chose the directory (under ``runs/``) and chose the strategy."""
    done = cli("search", "--budget-trials", "2", ok=True)
    first = _lines(done.err)[0]
    assert "journaling to runs/nb201-" in first and "nasforge resume runs/nb201-" in first, first


def test_sigint_to_a_running_search_process_ends_it_with_the_resume_line(tmp_path) -> None:
    """The real signal, sent to a search in its own process once its journal holds a trial:
    exit 130, the last line names the trials kept and the resume command."""
    run = tmp_path / "signalled"
    argv = [sys.executable, "-m", "nasforge", "--threads", "1", "search", "--strategy", "rea",
            "--evaluator", "nb201-table", "--budget-trials", "15625", "--run-dir", str(run)]  # fmt: skip
    search = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal
    )
    journal = run / "journal.jsonl"
    deadline = time.monotonic() + 120
    while not (journal.exists() and journal.read_text(encoding="utf-8").count("\n") > 2):
        assert search.poll() is None and time.monotonic() < deadline, "the search ended or never journaled"
        time.sleep(0.05)
    search.send_signal(signal.SIGINT)
    _, err = search.communicate(timeout=60)
    assert search.returncode == 130, err
    last = _lines(err)[-1]
    assert last.startswith("interrupted: ") and last.endswith(
        f"journaled in {run}; continue with: nasforge resume {run}"
    )

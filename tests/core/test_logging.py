"""Status messages go through :mod:`logging` (issue 10): a run nobody watches on a terminal
still says what it is doing, the command line shows it on stderr, and a library user who
configured no logging gets no output at all."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest

import nasforge
from nasforge import api
from nasforge.kernel.progress_log import EVERY_ENV, ProgressLog, progress_interval
from nasforge.tools.cli import log_output

TOY = {"trials": 30, "seed": 0}
DARTS_TINY = {
    "train_data": "digits",
    "strategy_options": {"supernet": {"C": 4, "N": 1}, "epochs": 3, "max_batches": 2, "batch_size": 16},
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_records_are_throttled_and_end_on_the_last_count(caplog) -> None:
    clock = FakeClock()
    log = ProgressLog("nasforge.test", "rea on toy", 10, every=5.0, clock=clock)
    with caplog.at_level(logging.INFO, logger="nasforge"):
        for done in range(1, 11):
            clock.now += 2.0
            log.update(done, "best x 1")
        log.finish(10, "best x 2")
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "rea on toy: trial 3/10, best x 1, 6.0 s",
        "rea on toy: trial 6/10, best x 1, 12.0 s",
        "rea on toy: trial 9/10, best x 1, 18.0 s",
        "rea on toy: trial 10/10, best x 2, 20.0 s",
    ]


def test_a_short_or_silent_loop_logs_nothing(caplog) -> None:
    clock = FakeClock()
    short = ProgressLog("nasforge.test", "short", every=5.0, clock=clock)
    live_bar = ProgressLog("nasforge.test", "shown by a bar", every=0.0, silent=True, clock=clock)
    with caplog.at_level(logging.INFO, logger="nasforge"):
        for done in range(1, 4):
            clock.now += 1.0
            short.update(done)
            live_bar.update(done)
        short.finish(3)  # nothing logged before: a short run ends quietly too
        live_bar.finish(3)
    assert caplog.records == []


def test_the_interval_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(EVERY_ENV, "2.5")
    assert progress_interval() == 2.5
    for bad in ("soon", "-1"):
        monkeypatch.setenv(EVERY_ENV, bad)
        assert progress_interval() == 10.0


def test_a_run_without_a_live_bar_logs_its_progress(caplog, monkeypatch) -> None:
    """Not on a terminal (here: pytest's captured stderr), progress arrives as log records."""
    monkeypatch.setenv(EVERY_ENV, "0")
    with caplog.at_level(logging.INFO, logger="nasforge"):
        out = api.search("toy", "random", "toy", progress=True, **TOY)
    records = [r for r in caplog.records if r.name == "nasforge.experiment"]
    assert records[0].getMessage() == "random on toy: 30 trials, each evaluated by toy"  # up front
    assert len(records) == 31, "then one record a trial"
    last = re.fullmatch(r"random on toy: trial 30/30, best (\w+) (\S+), [\d.]+ s", records[-1].getMessage())
    assert last is not None, records[-1].getMessage()
    assert last[2] == f"{out.best_result.objectives[last[1]]:.4g}"


@pytest.mark.slow
def test_a_one_shot_run_logs_its_progress(caplog, monkeypatch) -> None:
    monkeypatch.setenv(EVERY_ENV, "0")
    with caplog.at_level(logging.INFO, logger="nasforge"):
        api.search("nb201", "darts", **DARTS_TINY)
    messages = [r.getMessage() for r in caplog.records if r.name == "nasforge.one_shot"]
    assert [m.split(",")[0] for m in messages] == [f"darts on nb201: trial {k}" for k in (1, 2, 3)]


@pytest.mark.slow
def test_the_library_configures_no_handler() -> None:
    """Only a NullHandler on ``nasforge``: records are dropped unless the application routes
    them (not even Python's last-resort handler prints them)."""
    handlers = logging.getLogger("nasforge").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)
    assert all(isinstance(h, logging.NullHandler) for h in handlers), handlers
    code = (
        "import logging; from nasforge import api; "
        "logging.getLogger('nasforge').warning('a warning nobody routed'); "
        "api.search('toy', 'random', 'toy', trials=30, progress=False); "
        "assert logging.getLogger().handlers == []; "
        "assert all(isinstance(h, logging.NullHandler) for h in logging.getLogger('nasforge').handlers)"
    )
    env = {**os.environ, EVERY_ENV: "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


SEARCH = ["search", "--space", "toy", "--evaluator", "toy", "--strategy", "random", "--budget-trials", "30"]


@pytest.mark.slow
def test_the_cli_logs_progress_on_stderr_and_removes_its_handler(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(EVERY_ENV, "0")
    before = list(logging.getLogger("nasforge").handlers)
    run = cli(*SEARCH, "--run-dir", tmp_path / "a", "--json", ok=True)
    lines = [line for line in run.err.splitlines() if "nasforge.experiment" in line]
    assert lines[0].endswith(" INFO nasforge.experiment: random on toy: 30 trials, each evaluated by toy")
    assert len(lines) == 31 and " INFO nasforge.experiment: random on toy: trial 30/30, best " in lines[-1]
    assert run.json()["trials"] == 30  # stdout stays the result alone
    assert logging.getLogger("nasforge").handlers == before
    assert logging.getLogger("nasforge").level == logging.NOTSET


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["-q", *SEARCH],
        [*SEARCH, "-q"],
        ["--log-level", "warning", *SEARCH],
    ],
)
def test_quiet_or_a_higher_level_keeps_progress_off_stderr(cli, tmp_path, monkeypatch, argv) -> None:
    monkeypatch.setenv(EVERY_ENV, "0")
    run = cli(*argv, "--run-dir", tmp_path / "a", ok=True)
    assert "nasforge.experiment" not in run.err


def test_the_level_comes_from_the_environment_and_bad_levels_are_one_line(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(EVERY_ENV, "0")
    monkeypatch.setenv(log_output.LEVEL_ENV, "error")
    assert "nasforge.experiment" not in cli(*SEARCH, "--run-dir", tmp_path / "a", ok=True).err
    monkeypatch.setenv(log_output.LEVEL_ENV, "loud")
    cli("spaces").assert_one_line_error("unknown log level 'loud'")


def test_verbose_shows_debug_records(cli, monkeypatch) -> None:
    def debug_listing(*_args: object, **_kwargs: object) -> None:
        logging.getLogger("nasforge.test").debug("a debug record")

    monkeypatch.setattr(nasforge.tools.cli.listing.Table, "add_row", debug_listing)
    assert "a debug record" in cli("-v", "spaces", ok=True).err
    assert "a debug record" not in cli("spaces", ok=True).err

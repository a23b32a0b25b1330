"""Issue 8, defect 2 (and 11: pool workers die with their parent): one writer per run
directory, refused at once with one line naming the holder; a SIGKILLed holder (with or
without a process pool) never blocks the next resume."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasforge import api
from nasforge.kernel.errors import RunInUseError, RunLockError
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.run_lock import RunLock
from tests.cli_run import one_line

TRIALS = 60
OPTIONS = {"population_size": 6, "sample_size": 3}
SEARCH = [
    "search",
    "--space",
    "toy",
    "--evaluator",
    "toy",
    "--strategy",
    "rea",
    "--budget-trials",
    str(TRIALS),
    "--seed",
    "5",
    "-o",
    "population_size=6",
    "-o",
    "sample_size=3",
    "-q",
]

# The real CLI with a plugin that slows each finished trial down, so a run stays alive.
SLOW_CLI = """
import os, sys, time
from nasforge import hookimpl
from nasforge.kernel.registry import get_registry
class Slow:
    @hookimpl
    def nasforge_trial_end(self, experiment, trial):
        time.sleep(float(os.environ["SLOW_TRIAL_SECONDS"]))
get_registry().pm.register(Slow())
from nasforge.tools.cli import main
main(sys.argv[1:])
"""

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _start_holder(run: Path, *extra: str) -> subprocess.Popen:
    # slow enough to outlive every check made while it holds the run (it is killed, not awaited)
    env = {**os.environ, "NASFORGE_THREADS": "1", "SLOW_TRIAL_SECONDS": "0.5"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLI, *SEARCH, "--run-dir", str(run), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        path = journal_path(run)
        if path.exists() and path.read_text().count('"type": "trial"') >= 2:
            return proc
        assert proc.poll() is None, "the holder died before it got going"
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the holder never started journaling")


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def _reference(tmp_path: Path, workers: int = 1) -> JournalReader:
    """The uninterrupted run (in-process with ``workers`` asks a batch, as a pool of that size)."""
    api.search(
        "toy",
        "rea",
        "toy",
        trials=TRIALS,
        seed=5,
        strategy_options=OPTIONS,
        workers=workers,
        run_dir=tmp_path / "ref",
    )
    return JournalReader.of_run(tmp_path / "ref")


def _assert_complete_and_identical(run: Path, reference: JournalReader) -> None:
    for line in journal_path(run).read_text().splitlines():
        json.loads(line)  # no glued or torn line anywhere
    got = JournalReader.of_run(run)
    assert [t.index for t in got.trials] == list(range(TRIALS)), "no trial lost or repeated"
    assert [(t.genotype, t.result) for t in got.trials] == [(t.genotype, t.result) for t in reference.trials]
    assert got.end is not None and got.end["best"] == reference.end["best"]


@pytest.mark.slow
def test_second_writer_is_refused_naming_the_holder_and_a_killed_holder_blocks_nothing(tmp_path, cli) -> None:
    run = tmp_path / "run"
    holder = _start_holder(run)
    try:
        # a second identical search, as a real process
        second = subprocess.run(
            [sys.executable, "-m", "nasforge", *SEARCH, "--run-dir", str(run)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "NASFORGE_THREADS": "1"},
        )
        assert second.returncode == 2
        line = one_line(second.stderr)
        assert f"pid {holder.pid} on host {socket.gethostname()}" in line, line
        assert "in use" in line and str(run) in line
        # a resume of the same directory, and the Python API, are refused the same way
        cli("resume", run, "-q").assert_one_line_error(f"pid {holder.pid}")
        with pytest.raises(RunInUseError, match=f"pid {holder.pid}"):
            api.resume(run)
        assert holder.poll() is None, "the holder was not disturbed"
    finally:
        _kill(holder)
    partial = JournalReader.of_run(run)
    assert 2 <= len(partial.trials) < TRIALS and partial.end is None

    cli("resume", run, "-q", ok=True)  # the dead holder's lock is gone with it
    _assert_complete_and_identical(run, _reference(tmp_path))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@linux_only
def test_killed_process_pool_search_leaves_no_workers_and_no_lock(tmp_path, cli) -> None:
    run = tmp_path / "run"
    holder = _start_holder(run, "--executor", "process", "--workers", "2")
    try:
        workers = _children(holder.pid)
        assert len(workers) >= 2, "the pool's workers are running"
    finally:
        _kill(holder)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)], "pool workers outlived their killed parent"

    cli("resume", run, "-q", ok=True)
    _assert_complete_and_identical(run, _reference(tmp_path, workers=2))


def test_lock_in_one_process_refuses_a_second_and_is_released(tmp_path) -> None:
    with RunLock(tmp_path / "run") as first:
        assert first.held
        with pytest.raises(RunInUseError) as refused:
            RunLock(tmp_path / "run").acquire()
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in str(refused.value)
        assert "\n" not in str(refused.value)
    with RunLock(tmp_path / "run") as again:
        assert again.held
    assert (tmp_path / "run" / "run.lock").read_text() == "", "no stale holder note is left"


def test_forked_child_does_not_keep_the_lock(tmp_path) -> None:
    """A fork (a process-pool worker) must not hold the run locked after its parent lets go."""
    lock = RunLock(tmp_path / "run").acquire()
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, after the at-fork handlers
        os.write(ready_w, b"x")
        time.sleep(5)  # outlive the parent's release below
        os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    try:
        lock.release()
        with RunLock(tmp_path / "run") as again:  # the child is still alive here
            assert again.held
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_run_dir_that_is_a_file_is_one_clear_error(tmp_path) -> None:
    blocker = tmp_path / "run"
    blocker.write_text("not a directory")
    with pytest.raises(RunLockError, match="not a directory"):
        RunLock(blocker).acquire()


def test_one_shot_run_takes_the_lock_too(tmp_path) -> None:
    with RunLock(tmp_path / "run"), pytest.raises(RunInUseError, match=f"pid {os.getpid()}"):
        api.search("nb201", "darts", run_dir=tmp_path / "run", strategy_options={"epochs": 1})
    assert not journal_path(tmp_path / "run").exists(), "refused before writing anything"


def test_a_discarded_lock_is_not_held_by_whoever_opened_the_old_file(tmp_path) -> None:
    run = tmp_path / "run"
    first = RunLock(run).acquire()
    stale = os.open(run / "run.lock", os.O_RDWR)  # a second process opened the old file...
    first.discard()  # ...the holder removes it (an empty run) and releases
    assert not (run / "run.lock").exists()
    import fcntl

    fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the old inode can be locked, but it is no lock
    with RunLock(run) as second:  # the next writer locks the file named run.lock
        assert second.held and (run / "run.lock").exists()
        with pytest.raises(RunInUseError):
            RunLock(run).acquire()
    os.close(stale)

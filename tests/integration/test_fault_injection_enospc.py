"""A disk that fills up mid-search, then space is freed and the run resumed (issue 8).

The search runs in a real CLI process and meets a real write error from the kernel, in
the middle of a journal record, whatever way the writer happens to be implemented:

* ``tmpfs``: as root, the run directory is a tmpfs of a few pages, which the journal
  fills mid-search (ENOSPC); the resume runs after a remount with room to spare;
* ``file-size-limit``: anywhere, the search process gets an ``RLIMIT_FSIZE`` a few dozen
  records long, so the write that crosses it is cut short and then fails (EFBIG), which
  is the same partial write a full disk makes; the resume runs without the limit.

Either way the failed search must say so in one line (exit 2, no traceback), leave a
readable journal, and the resumed run must equal an uninterrupted one: same trials in the
same order with the same results, the same best, no trial lost or repeated.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasforge.run.journal_file import JournalReader, journal_path
from tests.cli_run import one_line

BUDGET = 300
ARGS = [
    "search",
    "--space",
    "nb201",
    "--strategy",
    "rea",
    "--evaluator",
    "nb201-table",
    "--dataset",
    "cifar10",
]
ARGS += ["--budget-trials", str(BUDGET), "--seed", "5", "-q"]
#: Room for the header, the lock and a few dozen trial records (about 500 bytes each).
SMALL_FS = "32k"
FILE_SIZE_LIMIT = 20_000


def _search_process(run_dir: Path, *, file_size_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """The search in a real CLI process (a full disk ends a process; it must end cleanly)."""

    def limit() -> None:
        # ignore SIGXFSZ so that crossing the limit is a write error (EFBIG), not a kill
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [sys.executable, "-m", "nasforge", *ARGS, "--run-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NASFORGE_THREADS": "1"},
        preexec_fn=limit if file_size_limit is not None else None,
        check=False,
    )


def _can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and sys.platform.startswith("linux")


@contextlib.contextmanager
def _small_tmpfs(mountpoint: Path) -> Iterator[Path]:
    mountpoint.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={SMALL_FS}", "tmpfs", str(mountpoint)],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc}); the file-size-limit variant covers this")
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> JournalReader:
    """The uninterrupted run (a subprocess too, so that it runs the same way)."""
    run_dir = tmp_path_factory.mktemp("enospc-reference") / "run"
    proc = _search_process(run_dir)
    assert proc.returncode == 0, proc.stderr
    return JournalReader.of_run(run_dir)


def _assert_failed_cleanly(proc: subprocess.CompletedProcess[str], run_dir: Path) -> int:
    """Exit 2 with one line; the journal reads, and holds a prefix of the run."""
    assert proc.returncode == 2, f"a full disk must fail the search (exit {proc.returncode}): {proc.stderr}"
    one_line(proc.stderr)  # fails unless stderr is one line, without a traceback
    partial = JournalReader.of_run(run_dir)
    assert 0 < len(partial.trials) < BUDGET, f"the disk must fill mid-search, not after {len(partial.trials)}"
    assert [t.index for t in partial.trials] == list(range(len(partial.trials)))
    assert partial.end is None
    return len(partial.trials)


def _assert_equal_to_reference(run_dir: Path, reference: JournalReader, resumed_json: str) -> None:
    resumed = JournalReader.of_run(run_dir)
    assert [t.index for t in resumed.trials] == list(range(BUDGET)), "a trial was lost or repeated"
    assert [t.genotype for t in resumed.trials] == [t.genotype for t in reference.trials]
    assert [t.result.objectives for t in resumed.trials] == [t.result.objectives for t in reference.trials]
    assert resumed.end is not None and reference.end is not None
    assert resumed.end["best"] == reference.end["best"]
    assert json.loads(resumed_json)["best"] == reference.end["best_text"]


@pytest.mark.parametrize("fault", [pytest.param("tmpfs", marks=pytest.mark.slow), "file-size-limit"])
def test_disk_full_mid_search_then_resume_equals_uninterrupted(
    tmp_path: Path, cli, reference: JournalReader, fault: str
) -> None:
    if fault == "tmpfs":
        if not _can_mount():
            pytest.skip("mounting a tmpfs needs root on Linux; the file-size-limit variant covers this")
        with _small_tmpfs(tmp_path / "fs") as fs:
            run_dir = fs / "run"
            kept = _assert_failed_cleanly(_search_process(run_dir), run_dir)
            subprocess.run(["mount", "-o", "remount,size=4m", str(fs)], check=True, capture_output=True)
            resumed = cli("resume", run_dir, "-q", "--json", ok=True)
            _assert_equal_to_reference(run_dir, reference, resumed.out)
            again = cli("resume", run_dir, "-q", "--json")
            assert again.code == 0 and again.json()["trials"] == BUDGET, again.err
    else:
        run_dir = tmp_path / "run"
        kept = _assert_failed_cleanly(_search_process(run_dir, file_size_limit=FILE_SIZE_LIMIT), run_dir)
        assert journal_path(run_dir).stat().st_size <= FILE_SIZE_LIMIT
        resumed = cli("resume", run_dir, "-q", "--json", ok=True)
        _assert_equal_to_reference(run_dir, reference, resumed.out)
    assert kept < BUDGET

"""Ray for users with a cluster: ``--ray-address`` joins one started apart from the search.

The cluster test starts a real head node (``ray start --head --block``, in its own
session and temp dir) and tears down exactly the processes it started, by their process
group and temp dir, never with ``ray stop`` (which would stop every Ray on the machine).
It is slow (Ray starts slowly on two cores), so it runs with ``-m slow``; the refusals
(unreachable address, an address without the Ray executor) need no cluster and run always.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nasforge.run.journal_file import journal_path
from tests.cli_run import one_line

SEARCH = (
    "search",
    "--space",
    "nb201",
    "--strategy",
    "rea",
    "-o",
    "population_size=5",
    "-o",
    "sample_size=2",
    "--evaluator",
    "nb201-table",
    "--budget-trials",
    "12",
    "--workers",
    "2",
    "--seed",
    "7",
    "--quiet",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nasforge(*argv: object, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``python -m nasforge ARGV`` in a fresh process, as a user on the cluster would run it."""
    return subprocess.run(
        [sys.executable, "-m", "nasforge", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _processes_of(group: int, marker: str) -> list[int]:
    """Live pids in process group ``group`` or whose command line names ``marker`` (the
    cluster's temp dir): every process the head started, wherever it put them."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            state, pgid = fields[0], int(fields[2])
            if state == "Z":
                continue
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            if pgid == group or marker in cmdline:
                found.append(int(entry.name))
    return [pid for pid in found if pid != os.getpid()]


@contextlib.contextmanager
def local_cluster() -> Iterator[str]:
    """A one-node Ray cluster started apart from the search; yields its ``HOST:PORT``."""
    ray_bin = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    if ray_bin is None:
        pytest.skip("the ray command is not installed")
    port = _free_port()
    # Short: Ray's unix sockets live under it, and their paths may not exceed 107 bytes.
    temp = tempfile.mkdtemp(prefix="nfray", dir="/tmp")
    log = open(Path(temp) / "head.log", "w")  # noqa: SIM115 - closed in finally
    head = subprocess.Popen(
        [
            ray_bin,
            "start",
            "--head",
            f"--port={port}",
            "--num-cpus=2",
            "--disable-usage-stats",
            "--include-dashboard=false",
            f"--temp-dir={temp}",
            "--block",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: torn down as one
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            if head.poll() is not None:
                raise AssertionError(f"ray start failed:\n{(Path(temp) / 'head.log').read_text()[-3000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise AssertionError("ray start --head did not listen within 90 s")
            time.sleep(0.5)
        time.sleep(2)  # the GCS listens before the raylet has registered the node
        yield f"127.0.0.1:{port}"
    finally:
        _tear_down(head, temp)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _tear_down(head: subprocess.Popen[Any], temp: str) -> None:
    """Stop the head (SIGTERM lets ``--block`` stop what it started), then kill whatever
    of it is left; the test fails if a process survives."""
    group = head.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + 5  # a graceful stop, briefly; then what is left is killed
    while (left := _processes_of(group, temp)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if head.poll() is None:
        head.kill()
        head.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _processes_of(group, temp) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _processes_of(group, temp), "the Ray cluster left processes behind"


def _trials(run_dir: Path) -> list[dict[str, Any]]:
    """The journal's trial records, less what depends on the machine (wall time, and the
    checksum that covers it)."""
    records = [json.loads(line) for line in journal_path(run_dir).read_text().splitlines()]
    return [
        {k: v for k, v in r.items() if k not in ("wall_seconds", "checksum")}
        for r in records
        if r["type"] == "trial"
    ]


@pytest.mark.slow
def test_search_joined_by_address_has_the_in_process_journal(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    local = _nasforge(*SEARCH, "--run-dir", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    with local_cluster() as address:
        on_ray = _nasforge(
            *SEARCH, "--executor", "ray", "--ray-address", address, "--run-dir", tmp_path / "ray"
        )
    assert on_ray.returncode == 0, on_ray.stderr
    expected = _trials(tmp_path / "local")
    assert len(expected) == 12
    assert _trials(tmp_path / "ray") == expected  # same trials, genotypes, objectives, order
    header = json.loads(journal_path(tmp_path / "ray").read_text().splitlines()[0])
    assert header["spec"]["executor"] == "ray"


@pytest.mark.slow
def test_unreachable_address_is_one_line() -> None:
    pytest.importorskip("ray")
    port = _free_port()  # nothing listens on it
    run = _nasforge(
        *SEARCH, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--run-dir", "/nonexistent/x"
    )
    assert run.returncode == 2, run.stderr
    line = one_line(run.stderr)
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port}" in line, line


def test_address_without_ray_executor_is_refused(cli: Any, tmp_path: Path) -> None:
    run = cli(*SEARCH, "--ray-address", "127.0.0.1:6379", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("--ray-address", "--executor ray", "inprocess")
    assert not (tmp_path / "r").exists()
    run = cli(*SEARCH, "--executor", "process", "--trial-gpus", "1", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("--trial-gpus applies to --executor ray", "process")


def test_malformed_address_is_one_line(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    run = cli(*SEARCH, "--executor", "ray", "--ray-address", "nowhere", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("expected HOST:PORT")


@pytest.mark.slow
def test_ray_task_whose_worker_died_is_retried_and_recorded(tmp_path: Path) -> None:
    """A trial that kills its Ray worker once is run again; one that always does fails
    alone after ``retries``; either way the search goes on, asynchronously here."""
    pytest.importorskip("ray")
    from nasforge import api, get_registry
    from nasforge.run.executors import RETRIES_KEY
    from nasforge_ray import RayExecutor
    from tests.test_async_trials import KillFirstRun

    clean = api.search("toy", "random", "toy", trials=4, seed=1)
    genotypes = [t.genotype for t in clean.history]
    once, always = ("-".join(map(str, g.choices)) for g in genotypes[1:3])
    space = get_registry().space("toy")
    executor = RayExecutor(workers=2, retries=1)
    try:
        for g in genotypes:
            key = "-".join(map(str, g.choices))
            evaluator = KillFirstRun(space, str(tmp_path / key), (once, always), always=key == always)
            (tmp_path / key).mkdir()
            executor.submit(evaluator, g)
        done = {}
        for _ in genotypes:
            finished = executor.next_done()
            done[finished.ticket] = finished.result
    finally:
        executor.close()
    results = [done[t] for t in sorted(done)]
    assert [r.metadata.get(RETRIES_KEY) for r in results] == [None, 1, 1, None]
    assert results[2].failed and "worker died on each of 2 runs" in (results[2].error or "")
    assert [r.objectives for k, r in enumerate(results) if k != 2] == [
        t.result.objectives for k, t in enumerate(clean.history) if k != 2
    ]

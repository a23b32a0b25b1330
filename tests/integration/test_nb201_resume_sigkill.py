"""Issue 2: an REA run killed with SIGKILL midway and resumed equals an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from nasforge.run.journal_file import JournalReader, journal_path

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
    "--budget-trials",
    "200",
    "--seed",
    "7",
    "-q",
]

# Runs the real CLI with a plugin that slows each trial down, so the kill lands midway.
SLOW_CLI = """
import sys, time
from nasforge import hookimpl
from nasforge.kernel.registry import get_registry
class Slow:
    @hookimpl
    def nasforge_trial_end(self, experiment, trial):
        time.sleep(0.01)
get_registry().pm.register(Slow())
from nasforge.tools.cli import main
main(sys.argv[1:])
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nasforge", *args], capture_output=True, text=True, timeout=300, check=True
    )


def test_sigkill_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLI, *ARGS, "--run-dir", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        path = journal_path(killed)
        if path.exists() and path.read_text().count('"type": "trial"') >= 60:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = JournalReader.of_run(killed)
    assert 60 <= len(partial.trials) < 200, "the kill must land midway"
    assert partial.end is None

    resumed = json.loads(_cli("resume", str(killed), "-q", "--json").stdout)
    reference = json.loads(_cli(*ARGS, "--json", "--run-dir", str(tmp_path / "reference")).stdout)

    a, b = JournalReader.of_run(killed), JournalReader.of_run(tmp_path / "reference")
    assert [t.index for t in a.trials] == list(range(200)), "no trial lost or repeated"
    assert [t.genotype for t in a.trials] == [t.genotype for t in b.trials]
    assert [t.result.objectives for t in a.trials] == [t.result.objectives for t in b.trials]
    assert resumed["best"] == reference["best"]
    assert resumed["value"] == reference["value"]

"""Issue 16: Hyperband with short-train on digits, killed with SIGKILL in the middle of a
bracket and resumed, equals an uninterrupted run: the same trials at the same
fidelities (epochs), the same per-epoch curves, the same promotions and the same best."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasforge.run.journal_file import JournalReader, journal_path

# Tiny networks and 3 epochs: brackets (3 at 1 epoch -> 1 at 3) and (2 at 3 epochs).
ARGS = [
    "search",
    "--space",
    "nb201",
    "--strategy",
    "hyperband",
    "-o",
    "brackets=2",
    "--evaluator",
    "short-train",
    "--train-data",
    "digits",
    "--evaluator-option",
    "epochs=3",
    "--evaluator-option",
    'build={"C": 4, "N": 1}',
    "--budget-trials",
    "100",
    "--seed",
    "5",
    "-q",
]

# The real CLI, with a plugin that pauses after the second trial so the kill lands there:
# two trials of the first bracket's first rung journaled, the third not yet.
PAUSING_CLI = """
import sys, time
import torch
torch.set_num_threads(1)
from nasforge import hookimpl
from nasforge.kernel.registry import get_registry
class Pause:
    @hookimpl
    def nasforge_trial_end(self, experiment, trial):
        if trial.index == 1:
            time.sleep(60)
get_registry().pm.register(Pause())
from nasforge.tools.cli import main
main(sys.argv[1:])
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "nasforge", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env=env,
    )


@pytest.mark.slow  # kill and resume stays fast in test_nb201_resume_sigkill and the CLI's Ctrl-C test
def test_sigkill_mid_bracket_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSING_CLI, *ARGS, "--run-dir", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            path = journal_path(killed)
            if path.exists() and path.read_text().count('"type": "trial"') >= 2:
                break
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = JournalReader.of_run(killed)
    assert len(partial.trials) == 2 and partial.end is None, "killed inside the first bracket's first rung"

    resumed = json.loads(_cli("resume", str(killed), "-q", "--json").stdout)
    reference = json.loads(_cli(*ARGS, "--json", "--run-dir", str(tmp_path / "reference")).stdout)

    a, b = JournalReader.of_run(killed), JournalReader.of_run(tmp_path / "reference")
    assert [t.index for t in a.trials] == list(range(len(b.trials))), "no trial lost or repeated"
    assert [t.fidelity for t in b.trials] == [1, 1, 1, 3, 3, 3]
    assert [(t.genotype, t.fidelity) for t in a.trials] == [(t.genotype, t.fidelity) for t in b.trials]
    assert [t.result.objectives for t in a.trials] == [t.result.objectives for t in b.trials]
    curves = [t.result.metadata["per_epoch"]["valid_accuracy"] for t in a.trials]
    assert [len(c) for c in curves] == [1, 1, 1, 3, 3, 3], "per-epoch values are journaled"
    assert curves == [t.result.metadata["per_epoch"]["valid_accuracy"] for t in b.trials]
    assert all(c[-1] == t.result.objectives["valid_accuracy"] for c, t in zip(curves, a.trials, strict=True))
    # the promotion (which one of the three 1-epoch trials went on to 3 epochs) is the same
    first_rung = max(a.trials[:3], key=lambda t: t.result.objectives["valid_accuracy"])
    assert a.trials[3].genotype == first_rung.genotype
    assert resumed["best"] == reference["best"] and resumed["value"] == reference["value"]
    assert resumed["fidelity"] == "epochs"
    assert resumed["fidelity_spent"] == reference["fidelity_spent"] == 3 + 3 + 6

"""The example third-party plugin installs, is discovered by entry point, and conforms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.example_plugin import example_copy, run_nasforge


@pytest.mark.slow
def test_discovered_by_nasforge_plugins(installed: Path) -> None:
    proc = run_nasforge(installed, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    hello = next(p for p in json.loads(proc.stdout)["items"] if p["name"] == "hello")
    assert hello["ok"] and hello["distribution"] == "nasforge-hello"
    assert {"strategy:hill-climb", "metric:weight-norm", "space:hello-cell"} <= set(hello["provides"])


def test_usable_from_the_cli(installed: Path, tmp_path: Path) -> None:
    proc = run_nasforge(
        installed,
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--strategy",
        "hill-climb",
        "--budget-trials",
        "30",
        "-q",
        "--json",
        "--run-dir",
        str(tmp_path / "run"),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["trials"] == 30


@pytest.mark.slow
def test_example_passes_conformance_kit(installed: Path) -> None:
    copy = example_copy(installed)
    env = dict(os.environ, PYTHONPATH=str(installed))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(copy / "tests")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=copy,  # a copy outside the checkout: its run writes nothing into examples/
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout

"""The example third-party plugin installs, is discovered by entry point, and conforms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """Install the example into a private target dir (the test environment stays clean)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def _run(installed: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "nasforge", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_discovered_by_nasforge_plugins(installed: Path) -> None:
    proc = _run(installed, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    hello = next(p for p in json.loads(proc.stdout) if p["name"] == "hello")
    assert hello["ok"] and hello["distribution"] == "nasforge-hello"
    assert {"strategy:hill-climb", "metric:weight-norm", "space:hello-cell"} <= set(hello["provides"])


def test_usable_from_the_cli(installed: Path, tmp_path: Path) -> None:
    proc = _run(
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


def test_example_passes_conformance_kit(installed: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(installed))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=EXAMPLE,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout

"""The runnable examples run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nasforge.api import load_space
from nasforge.tools.export import load_genotype

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_search_nb201_example(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "search_nb201.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "best cell: |" in proc.stdout
    assert (tmp_path / "best.onnx").exists() and (tmp_path / "best.safetensors").exists()


def test_optuna_study_example_searches_a_nasforge_space_and_exports_the_best(tmp_path: Path) -> None:
    """The Optuna-study example: its own study suggests NAS-Bench-201 cells; the best is
    exported and read back (the example asserts the round trip itself)."""
    pytest.importorskip("optuna")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "optuna_study_nb201.py"), str(tmp_path), "15"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    best = next(line for line in proc.stdout.splitlines() if line.startswith("best cell: "))
    space = load_space("nb201")
    assert load_genotype(tmp_path / "best.safetensors", space) == space.parse(
        best.removeprefix("best cell: ")
    )
    assert (tmp_path / "best.onnx").exists()

"""The suite's own promise: it writes nothing into the checkout. The session-end check
(``tests/conftest.py``) sees a new ignored path, the session runs outside the checkout,
and hypothesis keeps its database elsewhere."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis.configuration import storage_directory

from tests.conftest import ROOT, checkout_entries


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_session_check_sees_what_a_run_leaves_behind(tmp_path) -> None:
    try:
        _git(tmp_path, "init", "-q")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git here")
    (tmp_path / ".gitignore").write_text("runs/\n*.egg-info/\n.venv/\n")
    (tmp_path / ".venv").mkdir()  # a developer's own: there before, not counted
    before = checkout_entries(tmp_path)
    assert before is not None
    (tmp_path / "runs" / "hnas-s0").mkdir(parents=True)
    (tmp_path / "runs" / "hnas-s0" / "journal.jsonl").write_text("{}\n")
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)  # bytecode: Python's, not counted
    (tmp_path / "pkg" / "__pycache__" / "m.pyc").write_bytes(b"")
    after = checkout_entries(tmp_path)
    assert after is not None
    assert sorted(after - before) == ["!! runs/hnas-s0/journal.jsonl"]


def test_outside_a_checkout_there_is_nothing_to_compare(tmp_path) -> None:
    assert checkout_entries(tmp_path / "nowhere") is None


def test_the_session_runs_outside_the_checkout() -> None:
    assert not Path.cwd().resolve().is_relative_to(ROOT)
    assert not Path(storage_directory("examples", intent_to_write=False).path).resolve().is_relative_to(ROOT)
    assert os.environ["XDG_CACHE_HOME"] and not Path(os.environ["XDG_CACHE_HOME"]).is_relative_to(ROOT)

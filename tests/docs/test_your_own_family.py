"""The "Your own architecture family" page: its example is the example file, and its
commands run as written, the family shrunk by space options and the budgets cut."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_run import CliRun
from tests.docs.pages import DOCS, ROOT, code_blocks, command_with, replaced

PAGE = DOCS / "getting-started" / "your-own-family.md"
EXAMPLE = ROOT / "examples" / "cnn_family.py"
SMALL = [
    "--space-option", "depths=[1,2]", "--space-option", "kernels=[3]",
    "--space-option", "widths=[4,8]", "--space-option", 'acts=["relu"]',
]  # fmt: skip


def test_the_page_shows_the_example_file() -> None:
    assert code_blocks(PAGE, "python")[0] == EXAMPLE.read_text(encoding="utf-8")


def test_the_page_commands_run(
    cli: Callable[..., CliRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    run = tmp_path / "run"
    search = replaced(command_with(PAGE, "search", "rea"), budget_trials="2")
    summary = cli(
        *search, *SMALL, "--evaluator-option", "epochs=1", "--run-dir", run, "-q", "--json", ok=True
    )
    assert "stage1.depth=" in str(summary.json())
    shown = cli(
        *[str(run) if w == "runs/<dir>" else w for w in command_with(PAGE, "inspect")], "--json", ok=True
    )
    assert "stage1.depth=" in str(shown.json())
    train = [str(run) if w == "runs/<dir>" else w for w in command_with(PAGE, "train")]
    trained = cli(
        *replaced(train, export=str(tmp_path / "out")), "--epochs", "1", "-q", "--json", ok=True
    ).json()
    assert isinstance(trained, dict) and trained["export"]["onnx_heldout_accuracy"] is not None
    darts = replaced(command_with(PAGE, "search", "darts"), epochs="1", max_batches="1", batch_size="8")
    cli(*darts, *SMALL, "--run-dir", tmp_path / "darts", "-q", ok=True)

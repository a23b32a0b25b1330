"""The getting-started pages' commands, run as a new user would run them, at small sizes.

The commands are read from the pages themselves (not copied here), so a page whose
command stops working, or whose example changes shape, fails the suite. Sizes are
reduced only where a command trains networks; the MNIST-1D search runs at the page's
own sizes in the slow suite.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.cli_run import CliRun
from tests.docs.pages import DOCS, code_blocks, command_with, commands, replaced

FIRST = DOCS / "getting-started" / "first-search.md"
OWN_DATA = DOCS / "getting-started" / "your-own-data.md"
EXPORT = DOCS / "getting-started" / "export-and-train.md"


@pytest.mark.slow
def test_first_search_then_inspect_and_export(cli: Callable[..., CliRun], tmp_path: Path) -> None:
    search = commands(FIRST)[0]
    assert search[:1] == ["search"] and "nb201-table" in search, "the page opens with the table search"
    run_dir = tmp_path / "runs" / "first"
    outcome = cli(*search, "--run-dir", run_dir, "--json", "-q", ok=True).json()
    assert outcome["trials"] == 200
    assert outcome["reported_objective"] == "test_accuracy"
    assert 93.0 < outcome["reported_value"] <= 94.38  # 94.37: the table's test optimum

    inspect_run = command_with(FIRST, "inspect", "runs/<dir>")
    shown = cli(*[str(run_dir) if w == "runs/<dir>" else w for w in inspect_run], "--json", ok=True).json()
    assert shown["kind"] == "run" and shown["best"] == outcome["best"] and shown["finished"]

    export = command_with(FIRST, "export", "runs/<dir>")
    best = tmp_path / "best"
    argv = [str(run_dir) if w == "runs/<dir>" else w for w in replaced(export, out=str(best))]
    cli(*argv, "-q", ok=True)
    assert sorted(p.name for p in best.iterdir()) == ["genotype.safetensors", "model.onnx"]

    for words in (
        command_with(FIRST, "inspect", "best/model.onnx"),
        command_with(EXPORT, "inspect", "best/genotype.safetensors"),
    ):
        target = best / Path(words[1]).name
        assert cli("inspect", target, "--json", ok=True).json()["kind"] in ("genotype", "onnx")
    onnx = cli("inspect", best / "model.onnx", "--json", ok=True).json()
    assert onnx["metadata"]["nasforge.weights"].startswith("untrained"), "as the export page says"


def _own_npz(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's own snippet that makes ``mine.npz``, run in ``directory``."""
    (snippet,) = [b for b in code_blocks(OWN_DATA, "python") if "np.savez" in b]
    monkeypatch.chdir(directory)
    exec(compile(snippet, str(OWN_DATA), "exec"), {})  # noqa: S102 - the page's example
    return directory / "mine.npz"


def test_search_on_your_own_npz(
    cli: Callable[..., CliRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _own_npz(tmp_path, monkeypatch)
    with np.load(data) as arrays:
        assert arrays["x"].shape == (600, 1, 8, 8) and set(arrays["y"].tolist()) == {0, 1}
    argv = replaced(command_with(OWN_DATA, "mine.npz"), budget_trials="2", epochs="1")
    outcome = cli(*argv, "--run-dir", tmp_path / "run", "--json", "-q", ok=True).json()
    assert outcome["trials"] == 2
    assert outcome["objective"] == "valid_accuracy" and 0.0 <= outcome["value"] <= 100.0


@pytest.mark.slow
def test_first_search_on_mnist1d_at_the_page_sizes(cli: Callable[..., CliRun], tmp_path: Path) -> None:
    pytest.importorskip("mnist1d")
    argv = command_with(FIRST, "mnist1d")
    outcome = cli(*argv, "--run-dir", tmp_path / "run", "--json", "-q", ok=True).json()
    assert outcome["trials"] == 6
    assert outcome["value"] > 20.0  # valid_accuracy, ten classes: chance is 10


@pytest.mark.slow
def test_the_python_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (example,) = [b for b in code_blocks(FIRST, "python") if "api.search" in b]
    monkeypatch.chdir(tmp_path)
    exec(compile(example, str(FIRST), "exec"), {})  # noqa: S102 - the page's example
    text, accuracy = capsys.readouterr().out.split()
    assert text.startswith("|") and 93.0 < float(accuracy) <= 94.38
    assert (tmp_path / "runs" / "rea-0" / "journal.jsonl").is_file()
    assert (tmp_path / "best.safetensors").is_file() and (tmp_path / "best.onnx").is_file()

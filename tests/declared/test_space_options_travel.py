"""A genotype file records the options its space was made with (and, for a space named by
its file, that file), so export, train and inspect of the file alone make the same space;
where the file has moved, ``--space`` names it for inspect, export and report."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.declared.test_cnn_family_cli import EXAMPLE, TINY, TRAIN


def test_a_space_knows_the_options_it_was_made_with() -> None:
    from examples.cnn_family import CnnFamily

    space = CnnFamily((1, 2), widths=[4, 8])
    assert space.space_options == {"depths": (1, 2), "widths": [4, 8]}
    assert pickle.loads(pickle.dumps(space)).space_options == space.space_options
    assert CnnFamily().space_options == {}


def test_a_genotype_file_of_a_space_with_options_travels_alone(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # train keeps its checkpoints under ./runs
    family = tmp_path / "family.py"
    shutil.copy(EXAMPLE, family)
    options = [a for option in TINY for a in ("--space-option", option)]
    searched = cli(
        "search", "--space", f"{family}:CnnFamily", *options, "--strategy", "random", *TRAIN,
        "--budget-trials", "1", "--run-dir", "run", "--export", "out", "-q", "--json", ok=True,
    ).json()  # fmt: skip
    text = searched["best"]
    file = tmp_path / "out" / "genotype.safetensors"
    info = cli("inspect", file, "--json", ok=True).json()
    assert info["space_options"] == {
        "depths": [1, 2],
        "kernels": [3, 5],
        "widths": [4, 8],
        "acts": ["relu", "gelu"],
    }
    assert info["space_source"] == f"{family}:CnnFamily" and info["text"] == text
    assert cli("export", file, "--out", "again", "--json", ok=True).json()["text"] == text
    trained = cli("train", file, "--train-data", "digits", "--epochs", "1", "-q", "--json", ok=True).json()
    assert trained["genotype"] == text

    moved = tmp_path / "elsewhere" / "family.py"
    moved.parent.mkdir()
    family.rename(moved)
    cli("export", file, "--out", "gone").assert_one_line_error(str(family), "--space PATH.py:NAME")
    read = cli("inspect", file, "--space", f"{moved}:CnnFamily", "--json", ok=True).json()
    assert read["text"] == text and read["read_with"] == f"{moved}:CnnFamily"
    cli("report", "run", "--space", f"{moved}:CnnFamily", "--out", "report.html", ok=True)
    assert text.split()[0] in (tmp_path / "report.html").read_text()
    cli("inspect", "run", "--space", f"{moved}:CnnFamily").assert_one_line_error(
        "--space reads a genotype file", "names its own space"
    )


def test_a_run_of_a_registered_space_with_options_exports_from_its_directory(
    cli: Any, tmp_path: Path
) -> None:
    cli(
        "search", "--space", "act-mlp", "--space-option", "layers=2", "--strategy", "random", *TRAIN,
        "--build-option", "width=8", "--budget-trials", "1", "--run-dir", tmp_path / "run", "-q", ok=True,
    )  # fmt: skip
    out = cli("export", tmp_path / "run", "--out", tmp_path / "out", "--json", ok=True).json()
    again = cli("export", out["genotype"], "--out", tmp_path / "again", "--json", ok=True).json()
    assert again["text"] == out["text"] and out["text"].count("|") == 1

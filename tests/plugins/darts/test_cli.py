"""``python -m nasforge_darts``: one command searches, journals and exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from nasforge.export import load_genotype
from nasforge.journal import journal_path
from nasforge_darts.cli import app
from nasforge_darts.nb201_compare import compare_on_nb201, summarise
from nasforge_darts.space import DartsSpace

RUNNER = CliRunner()


def _search(tmp_path: Path, *extra: str) -> dict:
    torch.set_num_threads(1)
    result = RUNNER.invoke(
        app,
        [
            "search",
            "--out",
            str(tmp_path),
            "--epochs",
            "1",
            "--C",
            "2",
            "-o",
            "max_batches=2",
            "--export-width",
            "4",
            "--export-depth",
            "3",
            "--json",
            "-q",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_search_exports_genotype_and_onnx(tmp_path: Path) -> None:
    summary = _search(tmp_path)
    g = load_genotype(tmp_path / "genotype.safetensors", DartsSpace())
    assert DartsSpace().format(g) == summary["genotype"]
    assert Path(summary["onnx_file"]).stat().st_size > 0
    assert summary["onnx_max_abs_diff"] < 1e-4
    lines = journal_path(tmp_path).read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["header", "trial", "end"]


def test_bad_option_is_one_line_error(tmp_path: Path) -> None:
    result = RUNNER.invoke(app, ["search", "--out", str(tmp_path), "-o", "nonsense"])
    assert result.exit_code != 0


def test_nb201_comparison_rows_and_summary() -> None:
    torch.set_num_threads(1)
    rows = compare_on_nb201(
        seeds=(0,),
        common={"epochs": 1, "max_batches": 2, "batch_size": 16, "supernet": {"C": 4, "N": 1}},
    )
    assert [r.strategy for r in rows] == ["darts", "prdarts[official-code]"]
    for r in rows:
        assert 0.0 <= r.skip_share <= 1.0
        assert set(r.accuracy) == {"cifar10", "cifar100", "imagenet16-120"}
        assert 0 < r.accuracy["cifar10"] < 100
    summary = summarise(rows)
    assert summary["darts"]["skip_share_std"] == 0.0


@pytest.mark.slow
def test_digits_search_finishes_in_minutes(tmp_path: Path) -> None:
    """The demo configuration: full digits, 10 epochs, C = 4, 3 cells (45 s of CPU here)."""
    torch.set_num_threads(1)
    result = RUNNER.invoke(app, ["search", "--out", str(tmp_path), "--json", "-q"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["seconds"] < 300 and summary["onnx_max_abs_diff"] < 1e-4
    records = [json.loads(line) for line in journal_path(tmp_path).read_text().splitlines()]
    trials = [r for r in records if r["type"] == "trial"]
    train_acc = [t["result"]["metadata"]["metrics"]["train_accuracy"] for t in trials]
    assert len(train_acc) == 10 and max(train_acc) > 0.3  # the supernet learns (chance: 0.1)

"""The NB201 comparison keeps each run's per-epoch skip share; the CLI sets one batch size."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from typer.testing import CliRunner

from nasforge_darts.cli import app
from nasforge_darts.nb201_compare import CompareRow, compare_on_nb201


def test_rows_carry_the_skip_share_of_every_epoch() -> None:
    torch.set_num_threads(1)
    rows = compare_on_nb201(
        seeds=(0,),
        common={"epochs": 2, "max_batches": 2, "batch_size": 16, "supernet": {"C": 4, "N": 1}},
    )
    for r in rows:
        assert len(r.skip_share_by_epoch) == 2
        assert r.skip_share_by_epoch[-1] == r.skip_share
        assert all(0.0 <= s <= 1.0 for s in r.skip_share_by_epoch)
        assert list(r.to_json()["skip_share_by_epoch"]) == list(r.skip_share_by_epoch)


def test_row_without_trajectory_still_builds() -> None:
    row = CompareRow("darts", 0, "g", 0.5, {"cifar10": 90.0}, 1.0)
    assert row.skip_share_by_epoch == ()


def test_cli_batch_size_applies_to_both_strategies(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    out = tmp_path / "rows.json"
    result = CliRunner().invoke(
        app,
        [
            "nb201-compare",
            "--seeds",
            "0",
            "--epochs",
            "1",
            "--C",
            "2",
            "--batch-size",
            "300",
            "--json-file",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["settings"]["batch_size"] == 300
    assert [len(r["skip_share_by_epoch"]) for r in saved["rows"]] == [1, 1]

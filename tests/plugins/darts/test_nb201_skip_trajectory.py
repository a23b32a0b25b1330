"""The table comparison (``nasforge darts-compare``): rows keep each run's per-epoch skip
share, the summary aggregates them, and the command sets one batch size for both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasforge.tools.cli import main
from nasforge_darts.table_compare import TABLE_DATASETS, CompareRow, compare_on_table, summarise

TINY = {"epochs": 2, "max_batches": 2, "batch_size": 16, "supernet": {"C": 4, "N": 1}}


@pytest.mark.slow
def test_rows_carry_the_skip_share_of_every_epoch_and_table_accuracies() -> None:
    rows = compare_on_table(seeds=(0,), common=TINY)
    assert [r.strategy for r in rows] == ["darts", "prdarts[official-code]"]
    for r in rows:
        assert len(r.skip_share_by_epoch) == 2
        assert r.skip_share_by_epoch[-1] == r.skip_share
        assert all(0.0 <= s <= 1.0 for s in r.skip_share_by_epoch)
        assert list(r.to_json()["skip_share_by_epoch"]) == list(r.skip_share_by_epoch)
        assert set(r.accuracy) == set(TABLE_DATASETS)
        assert all(0 < a < 100 for a in r.accuracy.values())
    summary = summarise(rows)
    assert summary["darts"]["skip_share_mean"] == rows[0].skip_share
    assert summary["darts"]["skip_share_std"] == 0.0  # one seed
    assert summary["darts"]["cifar100_mean"] == rows[0].accuracy["cifar100"]


def test_row_without_trajectory_still_builds() -> None:
    row = CompareRow("darts", 0, "g", 0.5, {"cifar10": 90.0}, 1.0)
    assert row.skip_share_by_epoch == ()


@pytest.mark.slow
def test_command_batch_size_applies_to_both_strategies(capsys, tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    argv = ["darts-compare", "--seeds", "0", "--epochs", "1", "--C", "2", "--batch-size", "300"]
    argv += ["--table-dataset", "cifar10", "--json-file", str(out), "--json"]
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code == 0, capsys.readouterr().err
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert printed == saved
    assert saved["settings"]["batch_size"] == 300
    assert [len(r["skip_share_by_epoch"]) for r in saved["rows"]] == [1, 1]
    assert [set(r["accuracy"]) for r in saved["rows"]] == [{"cifar10"}, {"cifar10"}]

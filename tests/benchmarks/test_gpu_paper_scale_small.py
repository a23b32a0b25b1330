"""The paper-scale command, small and on the CPU: every row runs and is recorded; a sitting
that runs out of time packs its scores, and the next continues from them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gpu_paper_scale  # noqa: E402


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "paper_scale.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_every_row_runs_small_and_a_later_sitting_continues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    first = tmp_path / "first"
    assert gpu_paper_scale.main(["--device", "cpu", "--small", "--out", str(first)]) == 0
    out = capsys.readouterr().out
    rows = records(first)
    assert [r["settings"]["row"] for r in rows] == list(gpu_paper_scale.ROWS)
    assert all("cifar10" in rows[0][f"{m} k=20"] for m in gpu_paper_scale.EIGEN)
    assert set(gpu_paper_scale.SIX) <= set(rows[1]) and "ensemble of the six" in rows[1]
    assert "random search, 20 queries" in out and "random search, 10 queries" in out
    archives = sorted(first.glob("paper-scale-state-*.tar.gz"))
    assert archives and all(a.stat().st_size < 15 * 2**20 for a in archives)

    # out of time before anything: nothing recorded, the state still packed, exit 3
    stopped = tmp_path / "stopped"
    code = gpu_paper_scale.main(
        [
            "--device",
            "cpu",
            "--small",
            "--out",
            str(stopped),
            "--rows",
            "prerank",
            "--resume",
            str(first),
            "--time-limit",
            "0",
        ]
    )
    assert code == 3 and not (stopped / "paper_scale.jsonl").exists()
    assert sorted(stopped.glob("paper-scale-state-*.tar.gz"))

    # the next sitting continues from the packed scores: the same numbers
    again = tmp_path / "again"
    assert (
        gpu_paper_scale.main(
            ["--device", "cpu", "--small", "--out", str(again), "--rows", "prerank", "--resume", str(stopped)]
        )
        == 0
    )
    assert records(again)[0]["synflow"] == rows[1]["synflow"]
    assert records(again)[0]["ensemble of the six"] == rows[1]["ensemble of the six"]


def test_bad_rows_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert gpu_paper_scale.main(["--rows", "nope", "--out", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1

"""Benchmark records are reused only for the same settings and the same code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from records import RecordFile, code_version  # noqa: E402


def test_a_record_is_reused_for_the_same_settings_and_code_only(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    settings = {"method": "rea", "seed": 0}
    first = RecordFile(path, "code-a")
    assert not first.has(settings)
    first.append(settings, {"accuracy": 93.1})
    assert first.has(settings) and not first.has({"method": "rea", "seed": 1})
    assert [r["accuracy"] for r in RecordFile(path, "code-a").records()] == [93.1]
    assert RecordFile(path, "code-b").records() == []  # the code changed: nothing is served


def test_recompute_ignores_earlier_records_and_the_latest_wins(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    settings = {"method": "rea", "seed": 0}
    RecordFile(path, "c").append(settings, {"accuracy": 1.0})
    again = RecordFile(path, "c", recompute=True)
    assert not again.has(settings)
    again.append(settings, {"accuracy": 2.0})
    assert [r["accuracy"] for r in again.records()] == [2.0]
    assert [r["accuracy"] for r in RecordFile(path, "c").records()] == [2.0]
    assert len(path.read_text().splitlines()) == 2  # history kept, never reported twice


def test_damaged_lines_are_not_results(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    file = RecordFile(path, "c")
    file.append({"seed": 0}, {"accuracy": 1.0})
    path.write_text(path.read_text() + '{"torn": \n[1, 2]\n')
    assert [r["accuracy"] for r in RecordFile(path, "c").records()] == [1.0]
    assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines()[:1])


def test_the_code_version_follows_the_source() -> None:
    assert code_version("nasforge_search") == code_version("nasforge_search")
    assert code_version("nasforge_search") != code_version("nasforge_nb201")
    with pytest.raises(ValueError, match="not an importable package"):
        code_version("no_such_package_here")

"""The search says which strategy searched and whether it was the default (no --strategy:
optuna-tpe where its extra is installed, else rea): in the summary, in --json, in the
journal, in ``inspect RUN_DIR`` (which shows the best score too) and after a resume."""

from __future__ import annotations

import sys

import pytest

from nasforge import api
from nasforge.kernel.registry import get_registry
from nasforge.run import defaults
from nasforge.run.journal_file import JournalReader

TABLE = ["search", "--budget-trials", "4", "-q"]


def test_a_search_without_strategy_says_it_used_the_default(cli, tmp_path) -> None:
    chosen = defaults.default_strategy(get_registry())
    report = cli(*TABLE, "--run-dir", tmp_path / "run", "--json", ok=True).json()
    assert report["strategy"] == chosen and report["strategy_default"] is True
    table = cli("resume", tmp_path / "run", "-q", ok=True).out
    assert f"{chosen} (the default" in table
    assert JournalReader.of_run(tmp_path / "run").header["defaults"] == ["strategy"]
    info = cli("inspect", tmp_path / "run", "--json", ok=True).json()
    assert info["strategy"] == chosen and info["strategy_default"] is True
    assert info["best_score"]["valid_accuracy"] == pytest.approx(report["value"])
    assert info["best_score"]["test_accuracy"] == pytest.approx(report["reported_value"])
    shown = cli("inspect", tmp_path / "run", ok=True).out
    assert "best score" in shown and f"{chosen} (the default" in shown


@pytest.mark.slow
def test_a_named_strategy_is_not_called_the_default(cli, tmp_path) -> None:
    report = cli(*TABLE, "--strategy", "rea", "--run-dir", tmp_path / "run", "--json", ok=True).json()
    assert report["strategy"] == "rea" and report["strategy_default"] is False
    assert "defaults" not in JournalReader.of_run(tmp_path / "run").header
    assert cli("inspect", tmp_path / "run", "--json", ok=True).json()["strategy_default"] is False
    assert "(the default" not in cli("resume", tmp_path / "run", "-q", ok=True).out


def test_without_the_optuna_extra_the_default_is_rea_and_says_why(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # the extra not installed
    report = cli("search", "--budget-trials", "4", "--run-dir", tmp_path / "run", ok=True)
    assert "rea (the default;" in report.out
    said = (
        "no strategy named: searching with rea (the default; optuna-tpe when the optuna extra is installed)"
    )
    assert said in report.err
    assert (
        defaults.strategy_default_note("optuna-tpe")
        == "optuna-tpe (the default: the optuna extra is installed)"
    )


def test_the_api_records_the_default_too(tmp_path) -> None:
    api.search(trials=3, run_dir=tmp_path / "run")
    assert JournalReader.of_run(tmp_path / "run").header["defaults"] == ["strategy"]
    api.search(strategy="random", trials=3, run_dir=tmp_path / "named")
    assert "defaults" not in JournalReader.of_run(tmp_path / "named").header


@pytest.mark.slow
def test_a_one_shot_summary_names_its_strategy(cli, tmp_path) -> None:
    argv = ["search", "--space", "nb201", "--strategy", "darts", "--train-data", "digits", "-o", "epochs=1"]
    argv += ["-o", 'supernet={"C": 2, "N": 1}', "-o", "max_batches=1", "-o", "batch_size=8"]
    report = cli(*argv, "--run-dir", tmp_path / "run", "-q", "--json", ok=True).json()
    assert report["strategy"] == "darts" and report["strategy_default"] is False

"""``nasforge search --stop-when`` and ``api.search(stop=...)`` (issue 16): a run that reaches
its target accuracy stops, says why, and a resume of it adds nothing."""

from __future__ import annotations

import json

import pytest

from nasforge import api
from nasforge.run.journal_file import JournalReader, journal_path
from tests.cli_run import run_main

SEARCH = ["search", "--space", "nb201", "--strategy", "random", "--benchmark-dataset", "cifar10"]


@pytest.mark.slow
def test_cli_stops_when_the_target_accuracy_is_reached(tmp_path) -> None:
    run = tmp_path / "run"
    code, out, err = run_main(
        *SEARCH,
        "--budget-trials",
        "300",
        "--stop-when",
        "valid_accuracy>=91",
        "--run-dir",
        run,
        "-q",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["trials"] < 300 and doc["objectives"]["valid_accuracy"] >= 91
    assert doc["stopped"]["rule"] == "valid_accuracy>=91" and doc["stopped"]["trial"] == doc["trials"] - 1
    before = journal_path(run).read_text()
    code, out, _ = run_main("resume", run, "-q", "--json")
    assert code == 0 and json.loads(out)["stopped"] == doc["stopped"]
    assert journal_path(run).read_text() == before
    code, out, _ = run_main("inspect", run, "--json")
    assert json.loads(out)["stopped"] == doc["stopped"]


def test_cli_plateau_and_time_options_become_rules(tmp_path) -> None:
    code, out, err = run_main(
        *SEARCH,
        "--budget-trials",
        "500",
        "--stop-plateau",
        "15",
        "--stop-after-seconds",
        "3600",
        "--run-dir",
        tmp_path / "p",
        "-q",
        "--json",
    )
    assert code == 0, err
    assert JournalReader.of_run(tmp_path / "p").header["spec"]["stop"] == ["time:3600", "plateau:15"]
    assert json.loads(out)["stopped"]["rule"] == "plateau:15"


@pytest.mark.slow
def test_bad_stop_rules_are_one_line(tmp_path) -> None:
    for argv, words in [
        (["--stop-when", "valid_accuracy=91"], "cannot read the stop rule"),
        (["--stop-when", "acc>=91"], "measures no 'acc'"),
        (["--stop-plateau", "0"], "--stop-plateau"),
        (["--strategy", "darts", "--stop-when", "valid_accuracy>=91"], "stop rules apply to ask/tell"),
    ]:
        code, _, err = run_main(*SEARCH, *argv, "--run-dir", tmp_path / "r", "-q")
        assert code == 2 and words in err, err
        assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_api_search_takes_stop_rules(tmp_path) -> None:
    outcome = api.search(
        "nb201", "random", "nb201-table", trials=300, stop=["valid_accuracy>=91"], run_dir=tmp_path
    )
    assert len(outcome.history) < 300
    assert outcome.produced_by["stopped"]["rule"] == "valid_accuracy>=91"

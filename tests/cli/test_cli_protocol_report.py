"""`nasforge search` reports what the benchmark protocol reports (issue 10): the best trial
is chosen by the observed objective (validation accuracy) and its test accuracy is shown."""

from __future__ import annotations


def test_search_reports_the_test_accuracy_of_the_cell_validation_chose(cli, tmp_path) -> None:
    out = cli(
        "search",
        "--strategy",
        "random",
        "--budget-trials",
        "12",
        "-q",
        "--json",
        "--run-dir",
        tmp_path / "r",
        ok=True,
    ).json()
    assert out["objective"] == "valid_accuracy" and out["reported_objective"] == "test_accuracy"
    objectives = out["objectives"]
    assert out["value"] == objectives["valid_accuracy"]
    assert out["reported_value"] == objectives["test_accuracy"]
    assert {"train_seconds", "latency_ms", "params_mb"} <= set(objectives)


def test_a_run_without_a_separate_reported_objective_shows_it_once(cli, tmp_path) -> None:
    out = cli(
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--strategy",
        "random",
        "--budget-trials",
        "5",
        "-q",
        "--json",
        "--run-dir",
        tmp_path / "r",
        ok=True,
    ).json()
    assert out["reported_objective"] is None and out["value"] == out["objectives"][out["objective"]]

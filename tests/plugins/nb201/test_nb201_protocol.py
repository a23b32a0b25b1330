"""The benchmark protocol end to end: strategies observe validation accuracy, pay the
recorded training seconds, and the run reports the test accuracy of what validation chose."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nasforge import JournalError, api
from nasforge.kernel.result import Trial, best_trial
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge_nb201 import NB201TableEvaluator, load_table
from nasforge_nb201.evaluator import FitnessOnTestSetWarning

ALL_OBJECTIVES = {"valid_accuracy", "test_accuracy", "train_seconds", "latency_ms", "params_mb"}
TINY = {"dataset": "cifar10", "trials": 60, "seed": 3}


def test_the_best_trial_is_chosen_by_validation_not_test(space) -> None:
    table, ev = load_table(), NB201TableEvaluator(space)
    valid, test = table.column("valid_accuracy", "cifar10"), table.column("test_accuracy", "cifar10")
    a, b = next((a, b) for a in range(200) for b in range(200) if valid[a] > valid[b] and test[a] < test[b])
    trials = [
        Trial(index=k, genotype=space.at_index(i), result=ev.evaluate(space.at_index(i)))
        for k, i in enumerate((b, a))
    ]
    chosen = best_trial(trials, ev.objective)
    assert chosen.genotype == space.at_index(a)
    assert chosen.result.objectives["test_accuracy"] < trials[0].result.objectives["test_accuracy"]


@pytest.mark.slow
def test_rea_under_the_protocol(space, tmp_path) -> None:
    """A tiny REA run: deterministic, selects on validation, reports the chosen cell's test
    accuracy, charges the recorded seconds and journals every objective."""
    out = api.search("nb201", "rea", "nb201-table", run_dir=tmp_path / "run", **TINY)
    again = api.search("nb201", "rea", "nb201-table", **TINY)
    assert [t.genotype for t in out.history] == [t.genotype for t in again.history]
    assert out.best == again.best

    table = load_table()
    indices = [space.index_of(t.genotype) for t in out.history]
    assert len(out.history) == 60
    assert out.best_result.objectives["valid_accuracy"] == max(
        t.result.objectives["valid_accuracy"] for t in out.history
    )
    best = space.index_of(out.best)
    assert out.best_result.objectives["test_accuracy"] == table.value("test_accuracy", best, "cifar10")
    assert [t.result.cost for t in out.history] == [
        table.value("train_seconds", i, "cifar10") for i in indices
    ]

    reader = JournalReader.of_run(tmp_path / "run")
    assert reader.header["objective"]["name"] == "valid_accuracy"
    assert reader.header["evaluator"]["protocol"]["fitness"] == "valid_accuracy"
    assert reader.header["evaluator"]["table_sha256"] == table.sha256
    assert all(set(t.result.objectives) == ALL_OBJECTIVES for t in reader.trials)
    assert api.resume(tmp_path / "run").best_result == out.best_result


def test_a_simulated_budget_is_spent_in_recorded_training_seconds() -> None:
    budget = 30_000.0
    out = api.search("nb201", "random", "nb201-table", dataset="cifar100", simulated_seconds=budget, seed=0)
    costs = [t.result.cost for t in out.history]
    assert sum(costs[:-1]) < budget <= sum(costs)
    assert all(t.result.cost == t.result.objectives["train_seconds"] for t in out.history)


def test_test_fitness_opt_in_selects_on_test(space) -> None:
    with pytest.warns(FitnessOnTestSetWarning):
        out = api.search("nb201", "rea", "nb201-table", evaluator_options={"fitness": "test"}, **TINY)
    tests = [t.result.objectives["test_accuracy"] for t in out.history]
    assert out.best_result.objectives["test_accuracy"] == max(tests)


@pytest.mark.slow
def test_the_benchmark_script_reports_and_plots_under_the_protocol(tmp_path) -> None:
    """A small run of ``benchmarks/rea_vs_random.py``: the report's rows and an atomically
    written plot (median and quartile band per strategy)."""
    pytest.importorskip("matplotlib")
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "rea_vs_random.py"
    plot = tmp_path / "anytime.svg"
    args = ["--seeds", "2", "--trials", "30", "--datasets", "cifar10", "imagenet16-120", "--plot", str(plot)]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for dataset in ("cifar10", "imagenet16-120"):
        assert sum(line.startswith(dataset) for line in lines) == 3  # rea, random, local
    assert "best-validation cell #6111" in done.stdout and "best-validation cell #10676" in done.stdout
    assert "target check, CIFAR-10" in done.stdout and "paper: REA 93.92±0.30" in done.stdout
    assert plot.read_bytes().lstrip().startswith(b"<?xml") and sorted(p.name for p in tmp_path.iterdir()) == [
        "anytime.svg"
    ]


def test_a_journal_made_observing_test_accuracy_is_not_replayed_under_the_protocol(tmp_path) -> None:
    run = tmp_path / "run"
    api.search("nb201", "random", "nb201-table", dataset="cifar10", trials=4, seed=0, run_dir=run)
    path = journal_path(run)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["objective"]["name"] = "test_accuracy"  # as journals made before the protocol say
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(JournalError, match="made observing 'test_accuracy'.*now observes 'valid_accuracy'"):
        api.resume(run)

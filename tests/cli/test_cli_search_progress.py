"""A search says up front how many trials it runs and what each costs, estimates the rest
after its first trial, and, off a terminal, reports progress within each training
(epochs and batches), not only when a trial ends."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from rich.console import Console

from nasforge.run.run_progress import RunProgress


def _npz(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(120) % 3
    np.savez(tmp_path / "d.npz", x=rng.normal(size=(120, 8)).astype(np.float32), y=y)
    return tmp_path / "d.npz"


def test_a_short_train_search_reports_trials_up_front_and_epochs_within_trials(
    cli, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("NASFORGE_PROGRESS_SECONDS", "0")  # every step is due: the lines must exist
    run = cli(
        "search", "--space", "toy", "--strategy", "random", "--evaluator", "short-train",
        "--train-data", _npz(tmp_path), "--budget-trials", "2", "--evaluator-option", "epochs=2",
        "--run-dir", tmp_path / "run", ok=True,
    )  # fmt: skip
    lines = run.err.splitlines()
    intro = next(
        i for i, line in enumerate(lines) if "2 trials, each trained 2 epochs on 84 examples" in line
    )
    within = [i for i, line in enumerate(lines) if "short-train on d: epoch " in line]
    assert within and intro < within[0], run.err
    assert any("epoch 2/2, batch 1/2 (epoch 1: valid_accuracy" in lines[i] for i in within), run.err
    ends = [i for i, line in enumerate(lines) if "trial 1/2, best valid_accuracy" in line]
    assert ends and within[0] < ends[0], "progress within the first trial comes before its end"


@pytest.mark.slow
def test_a_resumed_run_says_how_many_trials_were_done_before(cli, tmp_path) -> None:
    argv = [
        "search",
        "--space",
        "toy",
        "--strategy",
        "random",
        "--evaluator",
        "toy",
        "--run-dir",
        tmp_path / "r",
    ]
    cli(*argv, "--budget-trials", "3", "-q", ok=True)
    journal = tmp_path / "r" / "journal.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:-2]))  # killed after trial 2
    resumed = cli("resume", tmp_path / "r", ok=True)
    assert "3 trials (2 done before), each evaluated by toy" in resumed.err


def test_the_estimate_after_the_first_trial(caplog) -> None:
    quiet = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the test process
    with caplog.at_level(logging.INFO, "nasforge"):
        progress = RunProgress(
            "rea on nb201", 10, "valid_accuracy", show=False, console=quiet, intro="10 trials"
        )
        progress.advance(1, 50.0, wall=12.0)  # with one-time costs
        progress.advance(2, 50.0, wall=6.0)  # corrected: differs by more than a quarter
        progress.advance(3, 50.0, wall=60.0)  # two estimates at most
    said = [r.getMessage() for r in caplog.records]
    assert said[:3] == [
        "rea on nb201: 10 trials",
        "rea on nb201: the first trial took 12 s; the other 9 take about 2 min more",
        "rea on nb201: at about 6 s a trial, the other 8 take about 48 s more",
    ]
    assert not [m for m in said[3:] if "take about" in m]
    caplog.clear()
    with caplog.at_level(logging.INFO, "nasforge"):
        fast = RunProgress("x", 100, "v", show=False, console=quiet, workers=4)
        fast.advance(1, 1.0, wall=0.01)  # a table lookup: nothing worth a line
        replayed = RunProgress("y", 100, "v", show=False, console=quiet, workers=4)
        replayed.advance(1, 1.0, wall=None)
        replayed.advance(2, 1.0, wall=8.0)  # the first trial of this session; 4 workers at once
        replayed.advance(3, 1.0, wall=9.0)  # within a quarter: no second line
    assert [r.getMessage() for r in caplog.records if "take about" in r.getMessage()] == [
        "y: the first trial took 8 s; the other 98 take about 3 min more"
    ]


def _loading_slowly(monkeypatch):
    """Data that takes 0.5 s to load, said after 0.05 s; returns the loader module and its
    real loader (to put back)."""
    import time

    from nasforge.run import run_data as training_data

    real = training_data.load_dataset

    def slow(*args, **kwargs):
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(training_data, "SAY_LOADING_AFTER", 0.05)
    monkeypatch.setattr(training_data, "load_dataset", slow)
    return training_data, real


def test_slow_data_loading_is_said_and_a_quick_refusal_stays_one_line(cli, tmp_path, monkeypatch) -> None:
    training_data, real = _loading_slowly(monkeypatch)
    argv = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "toy", "--budget-trials", "1"]
    run = cli(
        *argv,
        "--evaluator",
        "short-train",
        "--train-data",
        _npz(tmp_path),
        "--run-dir",
        tmp_path / "r",
        ok=True,
    )
    first, second = run.err.splitlines()[:2]  # the run directory, then the slow load
    assert f"journaling to {tmp_path / 'r'}" in first and "loading the training data" in second
    monkeypatch.setattr(training_data, "load_dataset", real)
    monkeypatch.setattr(training_data, "SAY_LOADING_AFTER", 2.0)
    (tmp_path / "bad.npz").write_bytes(b"")
    refused = cli(
        *argv, "--evaluator", "short-train", "--train-data", tmp_path / "bad.npz", "--run-dir", tmp_path / "x"
    )
    refused.assert_one_line_error("the file is empty")


def test_a_one_shot_strategys_bad_option_is_refused_before_its_data_loads(cli, tmp_path, monkeypatch) -> None:
    """Was the run directory's line and the slow load's, then the refusal: the strategy
    (which takes no data when built) is built, and its options checked, first."""
    from nasforge.run import run_data as training_data

    loaded: list[object] = []
    monkeypatch.setattr(training_data, "load_dataset", lambda *a, **k: loaded.append(a))
    for strategy, option in (("darts", "nosuch=3"), ("darts", "epochs=-1"), ("simplex", "nosuch=3")):
        space = "nb201" if strategy == "darts" else "act-mlp"
        argv = ["search", "--space", space, "--strategy", strategy, "--train-data", "mnist1d", "-o", option]
        refused = cli(*argv, "--run-dir", tmp_path / strategy)
        refused.assert_one_line_error(f"strategy '{strategy}'", option.split("=")[0])
        assert not loaded and not (tmp_path / strategy).exists()


def test_what_a_search_said_while_it_set_up_is_dropped_with_a_refusal(cli, tmp_path, monkeypatch) -> None:
    """A slow load says so, and then the evaluator refuses an option: the refusal is the one
    line (it was preceded by the run directory's line and the load's); a run that starts
    shows both, in order, before its own lines."""
    _loading_slowly(monkeypatch)
    argv = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "short-train"]
    argv += ["--train-data", _npz(tmp_path), "--budget-trials", "1"]
    refused = cli(*argv, "--evaluator-option", "epochs=0", "--run-dir", tmp_path / "x")
    refused.assert_one_line_error("short-train needs epochs >= 1")
    no_evaluator = [a for a in argv if a not in ("--evaluator", "short-train")]
    advised = cli(
        *no_evaluator, "-o", "nosuch=1", "--run-dir", tmp_path / "y"
    )  # the default's advice held too
    advised.assert_one_line_error("strategy 'random' does not accept option 'nosuch'")
    run = cli(*argv, "--evaluator-option", "epochs=1", "--run-dir", tmp_path / "r", ok=True)
    lines = run.err.splitlines()
    assert "journaling to" in lines[0] and "loading the training data" in lines[1], lines[:3]


def test_a_supernet_option_the_space_refuses_is_refused_before_the_run_starts(cli, tmp_path) -> None:
    """Was refused when the strategy built its supernet, after the run's start lines."""
    argv = ["search", "--space", "nb201", "--strategy", "darts", "--train-data", "digits"]
    refused = cli(*argv, "-o", 'supernet={"nosuch": 1}', "--run-dir", tmp_path / "r")
    refused.assert_one_line_error("nb201 supernet does not accept option 'nosuch'")
    assert not (tmp_path / "r").exists()

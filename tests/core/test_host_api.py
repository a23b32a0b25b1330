"""What a host program embedding nasforge gets from ``api.search``/``api.resume``.

Per-trial and end callbacks and hook objects without a registry of their own; each new
trial seen once (none of those a resume replays), the end once per run (not when an ended
run is read again); a start and an end record at INFO under the ``nasforge`` logger; and
errors that name the Python call to make, not a command line.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from nasforge import api, hookimpl
from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.result import Trial
from nasforge.run.advice import cli_message
from nasforge.run.journal_file import journal_path
from nasforge.run.run_events import EVENT_KEY

RUN = {"space": "toy", "strategy": "random", "evaluator": "toy", "trials": 6, "seed": 2}


class Seen:
    """A host program's callbacks and a hook object, counting what they were given."""

    def __init__(self) -> None:
        self.trials: list[Trial] = []
        self.ends: list[SearchOutcome] = []
        self.hook_trials: list[Trial] = []
        self.hook_ends: list[SearchOutcome] = []

    def on_trial(self, trial: Trial) -> None:
        self.trials.append(trial)

    def on_end(self, outcome: SearchOutcome) -> None:
        self.ends.append(outcome)

    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Trial) -> None:
        self.hook_trials.append(trial)

    @hookimpl
    def nasforge_search_end(self, experiment: Any, outcome: SearchOutcome) -> None:
        self.hook_ends.append(outcome)


def _search(seen: Seen, **extra: Any) -> SearchOutcome:
    return api.search(**{**RUN, **extra}, on_trial=seen.on_trial, on_end=seen.on_end, hooks=[seen])


def _cut(run_dir: Path, kept: int) -> None:
    """The run killed after ``kept`` trials: its journal's header and first trials."""
    path = journal_path(run_dir)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: 1 + kept]), encoding="utf-8")


def test_each_new_trial_once_and_the_end_once(tmp_path: Path) -> None:
    seen = Seen()
    outcome = _search(seen, run_dir=tmp_path)
    assert [t.index for t in seen.trials] == list(range(6)) == [t.index for t in seen.hook_trials]
    assert seen.ends == [outcome] == seen.hook_ends


def test_a_resume_shows_only_the_trials_it_runs_and_ends_once(tmp_path: Path) -> None:
    full = _search(Seen(), run_dir=tmp_path / "full")
    _search(Seen(), run_dir=tmp_path / "cut")
    _cut(tmp_path / "cut", 2)
    seen = Seen()
    resumed = api.resume(tmp_path / "cut", on_trial=seen.on_trial, on_end=seen.on_end, hooks=[seen])
    assert resumed.best == full.best
    assert [t.index for t in seen.trials] == [2, 3, 4, 5], "replayed trials are not shown again"
    assert [t.index for t in seen.hook_trials] == [2, 3, 4, 5]
    assert seen.ends == [resumed] == seen.hook_ends


def test_reading_an_ended_run_again_announces_nothing(tmp_path: Path) -> None:
    _search(Seen(), run_dir=tmp_path)
    seen = Seen()
    again = api.resume(tmp_path, on_trial=seen.on_trial, on_end=seen.on_end, hooks=[seen])
    assert len(again.history) == 6
    assert (seen.trials, seen.ends, seen.hook_trials, seen.hook_ends) == ([], [], [], [])


@pytest.mark.slow
def test_a_one_shot_run_calls_back_too() -> None:
    seen = Seen()
    tiny = {"supernet": {"C": 4, "N": 1}, "epochs": 1, "max_batches": 1, "batch_size": 16}
    outcome = api.search(
        "nb201",
        "darts",
        train_data="digits",
        strategy_options=tiny,
        on_trial=seen.on_trial,
        on_end=seen.on_end,
    )
    assert len(seen.trials) == len(outcome.history) >= 1 and seen.ends == [outcome]


def test_a_hook_object_that_stops_the_run() -> None:
    class StopAfterThree:
        @hookimpl
        def nasforge_should_stop(self, experiment: Any, trial: Trial) -> str | None:
            return "enough" if trial.index >= 2 else None

    outcome = api.search(**RUN, hooks=[StopAfterThree()])
    assert len(outcome.history) == 3 and outcome.produced_by["stopped"]["reason"] == "enough"


def test_hook_objects_with_mistakes_are_refused_in_one_line() -> None:
    class Misspelt:
        @hookimpl
        def nasforge_trail_end(self, experiment: Any, trial: Trial) -> None:
            pass

    class Undecorated:
        def nasforge_trial_end(self, experiment: Any, trial: Trial) -> None:
            pass

    class Registers:
        @hookimpl
        def nasforge_register_strategies(self) -> list:
            return []

    with pytest.raises(NasforgeError, match="nasforge_trail_end"):
        api.search(**RUN, hooks=[Misspelt()])
    with pytest.raises(
        NasforgeError, match="implements no hook: decorate its methods with @nasforge.hookimpl"
    ):
        api.search(**RUN, hooks=[Undecorated()])
    with pytest.raises(NasforgeError, match="load_registry\\(extra_plugins="):
        api.search(**RUN, hooks=[Registers()])
    with pytest.raises(NasforgeError, match="on_trial must be callable"):
        api.search(**RUN, on_trial="print")  # type: ignore[arg-type]


def test_a_run_logs_its_start_and_its_end_at_info(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    with caplog.at_level(logging.INFO, logger="nasforge"):
        api.search(**RUN, run_dir=tmp_path)
    events = [(r.name, getattr(r, EVENT_KEY)) for r in caplog.records if hasattr(r, EVENT_KEY)]
    assert events == [("nasforge.run", "start"), ("nasforge.run", "end")]
    start, end = (r.getMessage() for r in caplog.records if hasattr(r, EVENT_KEY))
    assert "random on toy" in start and "seed 2" in start and "6 trials" in start
    assert "search ended: random on toy: 6 trials, best" in end
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="nasforge"):
        api.resume(tmp_path)  # ended: read again, not run
    assert not [r for r in caplog.records if hasattr(r, EVENT_KEY)]


def test_a_reused_run_directory_names_the_python_call(tmp_path: Path) -> None:
    api.search(**RUN, run_dir=tmp_path)
    with pytest.raises(JournalError) as caught:
        api.search(**{**RUN, "seed": 3}, run_dir=tmp_path)
    message = str(caught.value)
    assert f"nasforge.api.resume({str(tmp_path)!r})" in message and "nasforge resume" not in message
    assert f"`nasforge resume {tmp_path}`" in cli_message(caught.value), "the command line keeps its words"


@pytest.mark.slow
def test_the_cli_names_its_command_for_the_same_refusal(cli: Any, tmp_path: Path) -> None:
    args = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "toy", "--budget-trials", "3"]
    cli(*args, "--run-dir", tmp_path, "-q", ok=True)
    cli(*args, "--seed", "5", "--run-dir", tmp_path).assert_one_line_error(
        "different settings (seed)", f"`nasforge resume {tmp_path}`"
    )

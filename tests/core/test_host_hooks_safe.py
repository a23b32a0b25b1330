"""A host program's callbacks and hook objects cannot change a search, and a hook object
with a mistake is refused when it is passed, before the first trial, in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nasforge import api, hookimpl
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.result import Trial
from nasforge.run.journal_file import journal_path

RUN = {"space": "toy", "strategy": "rea", "evaluator": "toy", "trials": 30, "seed": 4}


def _vandal(trial: Trial) -> None:
    """An on_trial callback that edits what it is handed."""
    trial.result.objectives["score"] = -1000.0
    trial.result.metadata["edited"] = True


class Vandal:
    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Trial) -> None:
        trial.result.objectives.clear()


def _history(outcome: Any) -> list[tuple[Any, dict[str, float]]]:
    return [(t.genotype, dict(t.result.objectives)) for t in outcome.history]


def test_a_callback_that_edits_its_trial_changes_nothing_nor_the_resume(tmp_path: Path) -> None:
    plain = api.search(**RUN)
    edited = api.search(**RUN, run_dir=tmp_path, on_trial=_vandal, hooks=[Vandal()])
    assert edited.best == plain.best and _history(edited) == _history(plain)
    lines = journal_path(tmp_path).read_text(encoding="utf-8").splitlines(keepends=True)
    journal_path(tmp_path).write_text("".join(lines[:13]), encoding="utf-8")  # killed after 12 trials
    resumed = api.resume(tmp_path, on_trial=_vandal, hooks=[Vandal()])
    assert resumed.best == plain.best and _history(resumed) == _history(plain)


def test_a_hook_class_is_refused_before_the_first_trial() -> None:
    seen: list[Trial] = []

    class Logger:
        @hookimpl
        def nasforge_trial_end(self, experiment: Any, trial: Trial) -> None:
            seen.append(trial)

    with pytest.raises(
        NasforgeError, match=r"^hook object Logger is a class: pass an instance of it, Logger\(\)$"
    ):
        api.search(**RUN, hooks=[Logger])
    assert seen == []


def test_a_misnamed_hook_argument_is_refused_with_pluggys_reason() -> None:
    class Typo:
        @hookimpl
        def nasforge_trial_end(self, experiment: Any, trail: Trial) -> None:
            pass

    with pytest.raises(NasforgeError) as caught:
        api.search(**RUN, hooks=[Typo()])
    message = str(caught.value)
    assert "\n" not in message and message.startswith("hook object Typo: ")
    assert "hookimpl definition: nasforge_trial_end(experiment: 'Any', trail: 'Trial')" in message
    assert (
        "Argument(s) {'trail'} are declared in the hookimpl but can not be found in the hookspec" in message
    )

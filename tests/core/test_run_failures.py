"""Issue 8, defect 8: a search in which every trial failed is no success, and an evaluator
that cannot serve a space is refused before the run starts."""

from __future__ import annotations

from typing import ClassVar

import pytest

from nasforge import Budget, CapabilityError, api
from nasforge.kernel.errors import NasforgeError, SearchFailedError
from nasforge.kernel.search_space import SUPERNET
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.cli import main
from nasforge.tools.short_train import ShortTrainEvaluator


@pytest.mark.slow
def test_short_train_on_toy_is_refused_before_the_run_starts(tmp_path, cli) -> None:
    """The issue's repro: every trial used to fail on `in_channels`, and the CLI said success."""
    refused = cli(
        "search",
        "--space",
        "toy",
        "--evaluator",
        "short-train",
        "--dataset",
        "digits",
        "--budget-trials",
        "3",
        "--run-dir",
        tmp_path / "run",
        "-q",
    )
    refused.assert_one_line_error("short-train", "'toy'", "in_channels")
    assert "search finished" not in refused.out and "best" not in refused.out
    assert not (tmp_path / "run").exists(), "refused before anything was written"
    with pytest.raises(CapabilityError, match="in_channels"):
        api.search("toy", "random", "short-train", dataset="digits", trials=3)


def test_short_train_declares_that_it_builds_networks() -> None:
    assert ShortTrainEvaluator.requires == frozenset({"build"})


class _FailsAlways(ToyEvaluator):
    def evaluate(self, g):
        raise RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB")


def _spec(**kw) -> ExperimentSpec:
    return ExperimentSpec(space="toy", strategy="random", evaluator="toy", budget=Budget(trials=5), **kw)


def _experiment(run_dir, evaluator_cls=_FailsAlways) -> Experiment:
    from nasforge_search import RandomSearch

    space = ToySpace()
    evaluator = evaluator_cls(space)
    strategy = RandomSearch(space, objective=evaluator.objective, seed=0)
    return Experiment(space, strategy, evaluator, _spec(), run_dir=run_dir, progress=False)


def test_all_trials_failed_is_an_error_not_a_best(tmp_path) -> None:
    with pytest.raises(SearchFailedError) as failed:
        _experiment(tmp_path).run()
    message = str(failed.value)
    assert "all 5 trials failed" in message and "CUDA out of memory. Tried to allocate" in message
    assert "\n" not in message, "one line, even when the evaluator's error has several"
    reader = JournalReader.of_run(tmp_path)
    assert len(reader.trials) == 5 and all(t.result.failed for t in reader.trials), "failures are kept"
    assert reader.end is None, "no end record names a best that is not one"
    with pytest.raises(SearchFailedError, match="all 5 trials failed"):  # a resume says the same
        _experiment(tmp_path).run()
    assert len(JournalReader.of_run(tmp_path).trials) == 5


def test_some_failed_trials_are_still_a_success(tmp_path) -> None:
    class FailsOnSkip(ToyEvaluator):
        def evaluate(self, g):
            if g.choices[0] == "skip":
                raise RuntimeError("diverged")
            return super().evaluate(g)

    outcome = _experiment(tmp_path, FailsOnSkip).run()
    assert not outcome.best_result.failed


@pytest.mark.slow
def test_cli_all_failed_exits_two_with_one_line(tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setattr(ToyEvaluator, "evaluate", _FailsAlways.evaluate)
    argv = ["search", "--space", "toy", "--evaluator", "toy", "--budget-trials", "4", "-q"]
    failed = cli(*argv, "--run-dir", tmp_path / "run")
    failed.assert_one_line_error("all 4 trials failed")
    assert "search finished" not in failed.out
    resumed = cli("resume", tmp_path / "run", "-q", "--json")
    resumed.assert_one_line_error("all 4 trials failed")
    assert resumed.out == ""
    assert issubclass(SearchFailedError, NasforgeError)


def test_evaluator_requires_is_checked_like_a_strategys() -> None:
    class NeedsSupernet(ToyEvaluator):
        name = "needs-supernet"
        requires: ClassVar[frozenset[str]] = frozenset({SUPERNET})

    with pytest.raises(
        CapabilityError, match=r"evaluator 'needs-supernet' needs space capabilities \['supernet'\]"
    ):
        NeedsSupernet(ToySpace())


def test_build_options_a_space_takes_pass_the_preflight() -> None:
    class BuildsToys(ToyEvaluator):
        name = "builds-toys"

        def __init__(self, space, **kw) -> None:
            super().__init__(space, **kw)
            self.build_options = {"in_features": 8, "num_classes": 3}

    BuildsToys(ToySpace()).preflight()
    wrong = BuildsToys(ToySpace())
    wrong.build_options = {"in_channels": 3, "num_classes": 3}
    with pytest.raises(CapabilityError, match="its build takes: in_features, width, num_classes"):
        wrong.preflight()


def test_a_run_that_ends_before_its_first_trial_leaves_nothing(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    argv = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "toy", "-q"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--budget-trials", "5", "--budget-seconds", "1e-9", "--run-dir", str(run)])
    assert exit_info.value.code == 2
    assert "without a single trial" in capsys.readouterr().err
    assert not run.exists(), "a new run with no trial leaves no directory, journal or lock"
    # the directory is then free for a real run
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--budget-trials", "5", "--run-dir", str(run)])
    assert exit_info.value.code == 0 and (run / "journal.jsonl").exists()

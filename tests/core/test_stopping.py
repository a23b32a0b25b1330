"""Stop rules and the ``nasforge_should_stop`` hook end a run early, and it ends normally
(issue 16): an end record with the reason, a resume that adds nothing, inspect says why."""

from __future__ import annotations

import pytest

from nasforge import Budget, api, hookimpl
from nasforge.kernel.errors import OptionError
from nasforge.kernel.registry import get_registry
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec
from nasforge.run.stop_rules import AllOf, Plateau, StopRuleError, TargetReached, TimeLimit, parse_rule
from nasforge.tools.export.inspect import inspect_file


def _toy(**kw) -> ExperimentSpec:
    base = dict(
        space="toy",
        strategy="rea",
        evaluator="toy",
        budget=Budget(trials=200),
        seed=3,
        strategy_options={"population_size": 6, "sample_size": 3},
    )
    base.update(kw)
    return ExperimentSpec(**base)


def _table(**kw) -> ExperimentSpec:
    base = dict(
        space="nb201",
        strategy="random",
        evaluator="nb201-table",
        budget=Budget(trials=300),
        benchmark_dataset="cifar10",
        seed=0,
    )
    base.update(kw)
    return ExperimentSpec(**base)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("valid_accuracy>=93", TargetReached("valid_accuracy", 93)),
        ("latency_ms<=2.5", TargetReached("latency_ms", 2.5, at_least=False)),
        ("time:600", TimeLimit(600)),
        ("time:3600:simulated", TimeLimit(3600, "simulated")),
        ("plateau:20", Plateau(20)),
        ("score>=9 & plateau:5", AllOf([TargetReached("score", 9), Plateau(5)])),
    ],
)
def test_rules_read_and_write_their_text(text: str, rule) -> None:
    assert parse_rule(text) == rule
    assert parse_rule(rule.text) == rule


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("accuracy=93", "cannot read the stop rule"),
        ("valid_accuracy>=high", "not a number"),
        ("plateau:2.5", "whole number"),
        ("time:-1", "positive"),
        ("time:60:cpu", "'wall' or 'simulated'"),
        ("", "a stop rule is text"),
    ],
)
def test_bad_rules_are_one_line(text: str, words: str) -> None:
    with pytest.raises(StopRuleError, match=words) as info:
        parse_rule(text)
    assert "\n" not in str(info.value)
    with pytest.raises(OptionError, match=words):  # the spec refuses it the same way
        _toy(stop=[text])


def test_target_stops_the_run_and_the_run_ends_normally(tmp_path) -> None:
    full = Experiment.from_spec(_toy(budget=Budget(trials=60)), progress=False).run()
    scores = [t.result.objectives["score"] for t in full.history]
    target = sorted(set(scores))[-2]  # reached, but not by the first trial
    first = next(i for i, s in enumerate(scores) if s >= target)
    assert first > 0

    run = Experiment.from_spec(_toy(), run_dir=tmp_path, progress=False, stop=[f"score>={target:g}"])
    outcome = run.run()
    assert len(outcome.history) == first + 1  # stopped right after the trial that reached it
    stopped = outcome.produced_by["stopped"]
    assert stopped["rule"] == f"score>={target:g}" and stopped["trial"] == first
    assert "reached by trial" in stopped["reason"]

    reader = JournalReader.of_run(tmp_path)
    assert reader.end is not None and reader.end["stopped"] == stopped
    assert reader.header["spec"]["stop"] == [f"score>={target:g}"]  # a resume obeys it too
    before = journal_path(tmp_path).read_text()
    again = api.resume(tmp_path)
    assert journal_path(tmp_path).read_text() == before  # resume of a stopped run adds nothing
    assert again.produced_by["stopped"] == stopped and len(again.history) == first + 1
    info = inspect_file(tmp_path)
    assert info["finished"] and info["stopped"] == stopped


def test_a_killed_run_resumes_and_stops_at_the_same_trial(tmp_path) -> None:
    spec = _toy(stop=["plateau:8"])
    whole = Experiment.from_spec(spec, run_dir=tmp_path / "a", progress=False).run()
    n = len(whole.history)
    assert n < 200 and whole.produced_by["stopped"]["rule"] == "plateau:8"
    lines = journal_path(tmp_path / "a").read_text().splitlines(keepends=True)
    cut = tmp_path / "b"
    cut.mkdir()
    journal_path(cut).write_text("".join(lines[: 1 + n // 2]))  # header + half the trials
    resumed = api.resume(cut)
    assert [t.genotype for t in resumed.history] == [t.genotype for t in whole.history]
    assert resumed.produced_by["stopped"] == whole.produced_by["stopped"]


def test_plateau_counts_trials_since_the_best_changed() -> None:
    outcome = Experiment.from_spec(_toy(), progress=False, stop=[Plateau(5)]).run()
    history = outcome.history
    best_at = max(range(len(history)), key=lambda i: (history[i].result.objectives["score"], -i))
    assert len(history) == best_at + 1 + 5


def test_budget_still_ends_a_run_no_rule_stops() -> None:
    outcome = Experiment.from_spec(_toy(budget=Budget(trials=12)), progress=False, stop=["score>=1e9"]).run()
    assert len(outcome.history) == 12 and outcome.produced_by["stopped"] is None


def test_a_target_on_what_the_evaluator_never_measures_is_refused() -> None:
    with pytest.raises(StopRuleError, match="measures no 'accuracy'"):
        Experiment.from_spec(_toy(), progress=False, stop=["accuracy>=3"])


def test_table_run_stops_at_target_accuracy_python_api() -> None:
    """The issue's case: a run on the NAS-Bench-201 table stops once a cell reaches 91 %."""
    outcome = Experiment.from_spec(
        _table(), progress=False, stop=[TargetReached("valid_accuracy", 91.0)]
    ).run()
    history = outcome.history
    assert len(history) < 300
    assert history[-1].result.objectives["valid_accuracy"] >= 91.0
    assert all(t.result.objectives["valid_accuracy"] < 91.0 for t in history[:-1])


def test_simulated_time_limit_on_the_table() -> None:
    outcome = Experiment.from_spec(_table(), progress=False, stop=[TimeLimit(20_000, "simulated")]).run()
    costs = [t.result.cost for t in outcome.history]
    assert sum(costs) >= 20_000 > sum(costs[:-1])
    assert outcome.produced_by["stopped"]["rule"] == "time:20000:simulated"


def test_all_of_needs_every_rule() -> None:
    both = Experiment.from_spec(_toy(), progress=False, stop=["score>=0 & plateau:6"]).run()
    plateau = Experiment.from_spec(_toy(), progress=False, stop=["plateau:6"]).run()
    assert len(both.history) == len(plateau.history)  # the target holds from trial 0


class _StopAtFive:
    @hookimpl
    def nasforge_should_stop(self, experiment, trial):
        return "five is enough" if trial.index == 4 else None


def test_a_plugin_hook_stops_a_run(tmp_path) -> None:
    registry = get_registry()
    plugin = _StopAtFive()
    registry.pm.register(plugin)
    try:
        outcome = Experiment.from_spec(_toy(), run_dir=tmp_path, registry=registry, progress=False).run()
    finally:
        registry.pm.unregister(plugin)
    assert len(outcome.history) == 5
    assert outcome.produced_by["stopped"] == {
        "rule": "nasforge_should_stop",
        "reason": "five is enough",
        "trial": 4,
    }
    assert JournalReader.of_run(tmp_path).end["stopped"]["reason"] == "five is enough"


def test_cli_resume_and_inspect_of_a_stopped_run(tmp_path) -> None:
    import contextlib
    import io
    import json

    from nasforge.tools.cli import main

    Experiment.from_spec(_toy(), run_dir=tmp_path, progress=False, stop=["plateau:4"]).run()
    before = journal_path(tmp_path).read_text()

    def run(*argv: object) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                main([str(a) for a in argv])
                code = 0
            except SystemExit as exc:
                code = int(exc.code or 0)
        return code, out.getvalue()

    assert run("resume", tmp_path, "-q")[0] == 0
    assert journal_path(tmp_path).read_text() == before  # nothing added
    code, out = run("inspect", tmp_path, "--json")
    assert code == 0
    stopped = json.loads(out)["stopped"]
    assert stopped["rule"] == "plateau:4" and "has not changed in 4 trials" in stopped["reason"]


def test_rule_objects_check_their_values() -> None:
    with pytest.raises(StopRuleError, match="finite number"):
        TargetReached("valid_accuracy", "high")
    with pytest.raises(StopRuleError, match="positive"):
        TimeLimit(0)
    with pytest.raises(StopRuleError, match="whole number"):
        Plateau(True)
    nested = AllOf([AllOf(["score>=1", "plateau:3"]), TimeLimit(60)])
    assert nested.text == "score>=1 & plateau:3 & time:60" and parse_rule(nested.text) == nested

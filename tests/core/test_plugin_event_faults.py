"""An installed plugin whose event hooks raise never ends a run, nor changes it.

Its ``nasforge_trial_end``, ``nasforge_should_stop`` and ``nasforge_search_end`` are called
one plugin at a time; each that raises is said once on stderr (naming plugin and hook),
kept in the journal's end record, and shown by ``inspect`` and ``--json``. A plugin that
does not import is named with the file and line that failed, and every listing says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nasforge import api, hookimpl
from nasforge.kernel.registry import load_registry
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.plugin_faults import FAULTS_KEY
from nasforge.tools.export import inspect_file

HOOKS = ("nasforge_trial_end", "nasforge_should_stop", "nasforge_search_end")
NB201 = ("--space", "nb201", "--strategy", "rea", "--evaluator", "nb201-table", "--budget-trials", "50")


class BrokenHooks:
    """A logger plugin with a bug in every event hook."""

    calls = 0

    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Any) -> None:
        self.calls += 1
        raise RuntimeError("the trial logger broke")

    @hookimpl
    def nasforge_should_stop(self, experiment: Any, trial: Any) -> str | None:
        raise ValueError("the stop rule broke")

    @hookimpl
    def nasforge_search_end(self, experiment: Any, outcome: Any) -> None:
        raise KeyError("the end logger broke")


class Counting:
    """A healthy plugin beside the broken one: it still hears every event."""

    def __init__(self) -> None:
        self.trials = 0
        self.ends = 0

    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Any) -> None:
        self.trials += 1

    @hookimpl
    def nasforge_search_end(self, experiment: Any, outcome: Any) -> None:
        self.ends += 1


def _cli_with(monkeypatch: pytest.MonkeyPatch, cli: Any, plugins: list[Any], *argv: Any) -> Any:
    registry = load_registry(extra_plugins=plugins)
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    return cli(*argv)


def test_a_run_goes_on_unchanged_and_says_each_hook_once(
    monkeypatch: pytest.MonkeyPatch, cli: Any, tmp_path: Path
) -> None:
    plain = cli("search", *NB201, "--run-dir", tmp_path / "plain", "--json", "-q", ok=True).json()
    broken = BrokenHooks()
    run = _cli_with(
        monkeypatch, cli, [broken], "search", *NB201, "--run-dir", tmp_path / "broken", "--json", "-q"
    )
    assert run.code == 0, run.err
    assert broken.calls == 50, "the hook is still called every trial"
    got = run.json()
    assert got["best"] == plain["best"] and got["trials"] == plain["trials"] == 50
    warned = [line for line in run.err.splitlines() if "plugin '" in line]
    assert len(warned) == 3, run.err
    for hook, line in zip(HOOKS, warned, strict=True):
        assert hook in line and "BrokenHooks" in line, line
    faults = {f["hook"]: f for f in got[FAULTS_KEY]}
    assert sorted(faults) == sorted(HOOKS)
    assert faults["nasforge_trial_end"]["times"] == 50
    assert faults["nasforge_trial_end"]["error"] == "RuntimeError: the trial logger broke"
    assert faults["nasforge_trial_end"]["trial"] == 0 and faults["nasforge_search_end"]["trial"] is None
    end = JournalReader(journal_path(tmp_path / "broken")).end
    assert end is not None and [f["hook"] for f in end[FAULTS_KEY]] == [f["hook"] for f in got[FAULTS_KEY]]
    assert FAULTS_KEY not in (JournalReader(journal_path(tmp_path / "plain")).end or {})
    shown = cli("inspect", tmp_path / "broken", ok=True).out
    assert "plugin faults" in shown and "nasforge_search_end" in shown
    assert [f["hook"] for f in inspect_file(tmp_path / "broken")[FAULTS_KEY]] == list(faults)


def test_the_other_plugins_still_hear_every_event(tmp_path: Path) -> None:
    counting = Counting()
    registry = load_registry(extra_plugins=[BrokenHooks(), counting])
    outcome = api.search("toy", "random", "toy", trials=6, seed=1, registry=registry, run_dir=tmp_path / "r")
    clean = api.search("toy", "random", "toy", trials=6, seed=1)
    assert outcome.best == clean.best and counting.trials == 6 and counting.ends == 1
    assert [f["hook"] for f in outcome.produced_by[FAULTS_KEY]] == list(HOOKS)
    again = api.resume(tmp_path / "r", registry=registry)  # an ended run, read again
    assert again.produced_by[FAULTS_KEY] == outcome.produced_by[FAULTS_KEY]


def test_a_one_shot_run_survives_them_too(tmp_path: Path) -> None:
    registry = load_registry(extra_plugins=[BrokenHooks()])
    tiny = {"supernet": {"C": 4, "N": 1}, "epochs": 1, "max_batches": 1, "batch_size": 16}
    outcome = api.search(
        "nb201", "darts", train_data="digits", strategy_options=tiny, registry=registry, run_dir=tmp_path
    )
    hooks = [f["hook"] for f in outcome.produced_by[FAULTS_KEY]]
    assert hooks == ["nasforge_trial_end", "nasforge_search_end"]
    end = JournalReader(journal_path(tmp_path)).end
    assert end is not None and [f["hook"] for f in end[FAULTS_KEY]] == hooks


def test_a_plugin_that_fails_to_import_names_its_file_and_line(
    monkeypatch: pytest.MonkeyPatch, cli: Any, tmp_path: Path
) -> None:
    (tmp_path / "nasforge_broken_import.py").write_text(
        '"""A plugin whose dependency is missing."""\n\nimport nasforge_no_such_dependency  # noqa\n',
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NASFORGE_PLUGINS", "nasforge_broken_import")
    registry = load_registry()
    (failed,) = registry.failed
    where = f"{tmp_path / 'nasforge_broken_import.py'}:3"
    assert failed.error is not None and failed.error.endswith(f"({where})"), failed.error
    assert "ModuleNotFoundError: No module named 'nasforge_no_such_dependency'" in failed.error
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    for listing in ("spaces", "strategies", "metrics", "evaluators"):
        run = cli(listing, "--json")
        assert run.code == 0 and json.loads(run.out), listing
        (line,) = [line for line in run.err.splitlines() if line.strip()]
        assert "plugin 'nasforge_broken_import' failed to load" in line and where in line, line
    verbose = cli("-v", "plugins")  # the whole traceback, for the plugin's author
    assert (
        verbose.code == 1
        and "Traceback" in verbose.err
        and "import nasforge_no_such_dependency" in verbose.err
    )

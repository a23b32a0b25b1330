"""Failed trials and networks are seen, not only journaled: a space whose ``build`` raises
for a third of its genotypes (:mod:`tests.core.fragile_plugin`).

A search goes on past them, and its summary, stderr, ``inspect``, ``--json`` and the report
say how many failed and which first, with the error; ``score`` scores every other network,
names each that could not be built, and exits 1.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from nasforge import api
from nasforge.kernel.registry import load_registry
from nasforge.run.trial_failures import FAILURES_KEY
from tests.core import fragile_plugin

SEARCH = (
    "--space", "fragile", "--strategy", "random", "--evaluator", "short-train", "--train-data", "digits",
    "--evaluator-option", "epochs=1", "--budget-trials", "12", "--seed", "3",
)  # fmt: skip


@pytest.fixture
def fragile_cli(monkeypatch: pytest.MonkeyPatch, cli: Any) -> Any:
    registry = load_registry(extra_plugins=[fragile_plugin])
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    return cli


def _broken(text: str) -> bool:
    return text.startswith(fragile_plugin.BROKEN + "-")


def test_a_search_says_how_many_trials_failed_and_the_first(fragile_cli: Any, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shown = fragile_cli("search", *SEARCH, "--run-dir", run_dir, "-q")
    assert shown.code == 0, shown.err
    document = fragile_cli("resume", run_dir, "--json").json()  # the ended run, read again
    failures = document[FAILURES_KEY]
    assert failures["of"] == 12 and 0 < failures["count"] < 12
    first = failures["first"]
    assert _broken(first["genotype"]) and "its first slot cannot be skip" in first["error"]
    line = f"{failures['count']} of 12 trials failed; the first, trial {first['trial']} ({first['genotype']})"
    (warned,) = [row for row in shown.err.splitlines() if "trials failed" in row]
    assert line in warned, "stderr says it once, when the run ends"
    assert "failed trials" in shown.out and first["genotype"][:20] in shown.out, "the summary says it"

    info = fragile_cli("inspect", run_dir, "--json").json()
    assert info[FAILURES_KEY] == failures
    assert "failed trials" in fragile_cli("inspect", run_dir).out

    page = tmp_path / "report.html"
    assert fragile_cli("report", run_dir, "--out", page).code == 0
    html = page.read_text(encoding="utf-8")
    assert f"{failures['count']} of 12; the first, trial {first['trial']}" in html
    assert first["genotype"] in html


def test_a_clean_search_reports_no_failures(cli: Any, tmp_path: Path) -> None:
    toy = ("--space", "toy", "--evaluator", "toy", "--strategy", "random", "--budget-trials", "5")
    run = cli("search", *toy, "--run-dir", tmp_path / "r", "--json", "-q", ok=True)
    assert run.json()[FAILURES_KEY] is None and "trials failed" not in run.err
    assert FAILURES_KEY not in cli("inspect", tmp_path / "r", "--json", ok=True).json()


def test_score_scores_every_network_it_can_and_lists_the_rest(fragile_cli: Any) -> None:
    run = fragile_cli("score", "--space", "fragile", "--all", "-m", "params", "--json", "--no-cache")
    assert run.code == 1, run.err
    document = run.json()
    failed = document["failed"]
    assert len(failed) == 27 and all(_broken(f["text"]) for f in failed)
    assert all("its first slot cannot be skip" in f["error"] for f in failed)
    values = [row["scores"]["params"]["value"] for row in document["rows"]]
    assert sum(1 for v in values if isinstance(v, float) and math.isfinite(v)) == 54
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert lines[-1].startswith("27 of 81 networks could not be built")
    assert sum(1 for line in lines if line.startswith("not built: skip-")) == 27


def test_score_in_python_keeps_the_failures_apart() -> None:
    registry = load_registry(extra_plugins=[fragile_plugin])
    texts = ["linear-skip-skip-skip", "skip-linear-linear-linear"]
    scores = api.score(texts, space="fragile", metrics=["params"], registry=registry, cache=False)
    (failed,) = scores.failed()
    assert failed["text"] == texts[1]
    assert math.isfinite(scores.table.values("params")[0]) and math.isnan(scores.table.values("params")[1])

"""Failed trials and networks are seen, not only journaled: a space whose ``build`` raises
for a third of its genotypes (:mod:`tests.core.fragile_plugin`).

A search goes on past them, and its summary, stderr, ``inspect``, ``--json`` and the report
say how many failed and which first, with the error; ``score`` scores every other network,
names each that could not be built, and exits 1, on the default path and on the pipelined
one a GPU runs (forced on here, on the CPU: a builder thread, a process pool, stacks).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from nasforge import api
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import load_registry
from nasforge.run.trial_failures import FAILURES_KEY
from nasforge.tools.scoring import sample_genotypes, score_genotypes
from nasforge_nb201.space import NB201Space
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


# --- the pipelined sweep (a GPU's path; forced on here, on the CPU) ----------------------------
def test_the_pipeline_scores_every_network_it_can_as_the_default_path_does() -> None:
    registry = load_registry(extra_plugins=[fragile_plugin])
    space = registry.space("fragile")
    genotypes = list(space.enumerate())
    settings: dict[str, Any] = {"batch_size": 8, "registry": registry}
    plain = score_genotypes(space, genotypes, ["params", "synflow"], pipeline=False, **settings)
    piped = score_genotypes(space, genotypes, ["params", "synflow"], pipeline=True, **settings)
    assert plain.unbuilt() == piped.unbuilt() and len(piped.unbuilt()) == 27
    for metric in ("params", "synflow"):
        assert np.array_equal(plain.values(metric), piped.values(metric), equal_nan=True), metric
    flagged = [s.unbuilt for s in piped.column("params")]
    assert flagged == [_broken(space.format(g)) for g in genotypes]


def test_the_pipeline_built_by_a_process_pool_goes_on_past_failures() -> None:
    registry = load_registry(extra_plugins=[fragile_plugin])
    space = registry.space("fragile")
    # the broken ones first: the slot is sized by the first network that builds
    genotypes = sorted(space.enumerate(), key=lambda g: not _broken(space.format(g)))
    piped = score_genotypes(
        space, genotypes, ["params"], pipeline=True, executor="process", workers=2, registry=registry
    )
    failed = [space.format(genotypes[i]) for i, _ in piped.unbuilt()]
    assert failed == [space.format(g) for g in genotypes if _broken(space.format(g))] and failed
    built = [v for v, s in zip(piped.values("params"), piped.column("params"), strict=True) if not s.unbuilt]
    assert len(built) == len(genotypes) - len(failed) and all(math.isfinite(v) for v in built)


def test_score_on_the_pipeline_lists_the_failed_and_exits_1(
    fragile_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = functools.partial(score_genotypes, pipeline=True)
    monkeypatch.setattr("nasforge.tools.scoring.api.score_genotypes", piped)
    run = fragile_cli("score", "--space", "fragile", "--all", "-m", "params", "--json", "--no-cache")
    assert run.code == 1, run.err
    failed = run.json()["failed"]
    assert len(failed) == 27 and all("its first slot cannot be skip" in f["error"] for f in failed)
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert lines[-1].startswith("27 of 81 networks could not be built")


class _FragileCells(NB201Space):
    """NAS-Bench-201 cells whose first edge is ``none`` do not build (a stacked sweep's case)."""

    def build(self, g: Genotype, **cfg: object) -> Any:
        if g.choices[0] == "none":
            raise RuntimeError("no network with an empty first edge")
        return super().build(g, **cfg)

    def network_factory(self, **cfg: object) -> Any:
        return None  # the seeded rebuild, through build above


def test_a_stacked_pipeline_flags_the_networks_it_cannot_build() -> None:
    torch.set_num_threads(1)
    space = _FragileCells()
    genotypes = sample_genotypes(space, 12, seed=5)
    broken = [g.choices[0] == "none" for g in genotypes]
    assert any(broken) and not all(broken)
    settings: dict[str, Any] = {"batch_size": 4, "build": {"C": 4, "N": 1}, "cache": None}
    plain = score_genotypes(space, genotypes, ["synflow"], pipeline=False, **settings)
    stacked = score_genotypes(space, genotypes, ["synflow"], pipeline=True, stack=4, **settings)
    assert [s.unbuilt for s in stacked.column("synflow")] == broken
    assert plain.unbuilt() == stacked.unbuilt()
    for x, y, bad in zip(plain.values("synflow"), stacked.values("synflow"), broken, strict=True):
        assert math.isnan(y) if bad else abs(x - y) <= 1e-4 * max(abs(x), abs(y))

"""Journals written before the core's split into kernel, run and tools (checked in under
``tests/data/journals_before_split``) resume under the current code, and come out as the
old code ran them to the end: a killed run, continued by the new code, is bit for bit the
run the old code made. Ended runs are read as they were (best, front, ensemble)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from nasforge import api
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader

DATA = Path(__file__).resolve().parents[1] / "data" / "journals_before_split"


def _cut(name: str, trials: int, tmp_path: Path) -> Path:
    """The journal of run ``name`` as a kill after ``trials`` trials left it."""
    lines = (DATA / name / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    run = tmp_path / name
    run.mkdir()
    (run / "journal.jsonl").write_text("".join(lines[: 1 + trials]), encoding="utf-8")
    return run


def _trials(run: Path) -> list[tuple]:
    """Each trial's genotype, budget and what it measured (not its cost: a trained
    network's cost is the wall time it took, which no two runs share)."""
    return [
        (t.genotype, t.fidelity, t.result.objectives, t.result.metadata, t.result.failed)
        for t in JournalReader.of_run(run).trials
    ]


@pytest.mark.parametrize(("name", "kept"), [("rea", 15), ("rea_async", 14), ("hyperband", 4)])
def test_a_killed_run_resumes_as_the_old_code_ran_it(name: str, kept: int, tmp_path: Path) -> None:
    torch.set_num_threads(1)  # as the hyperband journal was written
    run = _cut(name, kept, tmp_path)
    outcome = Experiment.resume(run, progress=False).run()
    full = JournalReader.of_run(DATA / name)
    assert _trials(run) == _trials(DATA / name), "the same trials, results and order as the old run"
    assert outcome.best.to_json() == full.end["best"]


def test_an_ended_multi_objective_run_reads_as_it_was(cli) -> None:
    end = JournalReader.of_run(DATA / "nsga2").end
    outcome = api.resume(DATA / "nsga2")
    assert [t.genotype.to_json() for t in outcome.front] == [m["genotype"] for m in end["front"]]
    doc = cli("inspect", DATA / "nsga2", "--json", ok=True).json()
    assert len(doc["front"]) == len(end["front"])


def test_an_ended_ensemble_run_reads_as_it_was(cli, tmp_path: Path) -> None:
    run = tmp_path / "nesbs"
    shutil.copytree(DATA / "nesbs", run)
    end = JournalReader.of_run(run).end
    outcome = api.resume(run)
    assert outcome.ensemble is not None
    assert [g.to_json() for g in outcome.ensemble.members] == end["ensemble"]["members"]
    doc = cli("inspect", run, "--json", ok=True).json()
    assert json.dumps(doc).count("ensemble") >= 1

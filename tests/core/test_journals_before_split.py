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
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader
from nasforge.tools.short_train import ShortTrainEvaluator

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


def _answer_as_recorded(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a training evaluator answer each (genotype, epochs) with the old run's result.

    Three epochs of training are chaotic in the last bits: the same code on two CPUs whose
    convolution kernels differ (AVX2 vs AVX-512 paths) ends a few validation examples apart,
    so the new trials of a resumed training run cannot match bit for bit across machines.
    What the old journal pins is the resume itself: the strategy's state rebuilt from the
    kept trials, the same next asks at the same fidelities, the same end. Any ask the old
    run did not make fails the test.
    """
    recorded = {(t.genotype, t.fidelity): t.result for t in JournalReader.of_run(DATA / name).trials}

    def evaluate_at(self: ShortTrainEvaluator, g: Genotype, fidelity: int | None, **_: object) -> Result:
        key = (g, fidelity)
        assert key in recorded, f"the resumed run asked {g} at {fidelity}, which the old run never did"
        return recorded[key]

    monkeypatch.setattr(ShortTrainEvaluator, "evaluate_at", evaluate_at)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kept"), [("rea", 15), ("rea_async", 14), ("hyperband", 4)])
def test_a_killed_run_resumes_as_the_old_code_ran_it(
    name: str, kept: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch.set_num_threads(1)
    if name == "hyperband":  # the one journal whose evaluator trains
        _answer_as_recorded(name, monkeypatch)
    run = _cut(name, kept, tmp_path)
    outcome = Experiment.resume(run, progress=False).run()
    full = JournalReader.of_run(DATA / name)
    assert _trials(run) == _trials(DATA / name), "the same trials, results and order as the old run"
    assert outcome.best.to_json() == full.end["best"]


@pytest.mark.slow
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

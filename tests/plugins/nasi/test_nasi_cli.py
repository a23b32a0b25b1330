"""NASI through the core's one-shot path: `nasforge search --strategy nasi --export`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.tools.cli import app
from nasforge.tools.export import inspect_file, load_genotype


def test_search_command_runs_nasi_on_digits_and_exports(tmp_path) -> None:
    out, run = tmp_path / "export", tmp_path / "run"
    args = ["search", "--space", "nb201", "--strategy", "nasi", "--dataset", "digits", "--json", "--quiet"]
    args += ["-o", "steps=3", "-o", "batch_size=16", "-o", "calibration_samples=3"]
    args += ["-o", 'supernet={"C": 4, "N": 1}', "--build-option", "C=4", "--build-option", "N=1"]
    args += ["--run-dir", str(run), "--export", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["best_genotype"]["choices"] == list(load_genotype(out / "genotype.safetensors").choices)
    assert inspect_file(out / "model.onnx")["inputs"][0]["shape"][1:] == [1, 8, 8]
    assert summary["onnx_max_abs_diff"] <= 1e-4
    reader = JournalReader(journal_path(run))
    assert len(reader.trials) == 3  # one journaled trial per straight-through sample
    assert all("proxy" in t.result.objectives for t in reader.trials)

"""`nasforge hnas` (plugins/nasforge_hnas/cli.py, mounted by the command hook): search, then export."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.tools.export import load_genotype
from nasforge_hnas.cli import hnas


def test_hnas_command_on_the_table_journals_and_exports(tmp_path) -> None:
    app = typer.Typer()
    app.command()(hnas)
    app.command("unused")(lambda: None)
    out, run = tmp_path / "export", tmp_path / "run"
    args = ["hnas", "--evaluator", "nb201-table", "--dataset", "cifar10", "--steps", "4", "--no-onnx"]
    args += ["--build-option", "C=4", "--build-option", "N=1", "--json", "--quiet", "--out", str(out)]
    args += ["--run-dir", str(run), "-o", "pool_size=12", "-o", "input_shape=[3,8,8]", "-o", "batch_size=16"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["trials"] == 4 and len(JournalReader(journal_path(run)).trials) == 4
    assert list(load_genotype(out / "genotype.safetensors").choices) == summary["best_genotype"]["choices"]
    assert "onnx" not in summary

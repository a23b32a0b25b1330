"""`nasforge nasi` (sdk/nasforge/cli/nasi_hnas_cmd.py): search digits, export both files."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from nasforge.cli.nasi_hnas_cmd import nasi
from nasforge.export import inspect_file, load_genotype


def test_nasi_command_searches_digits_and_exports(tmp_path) -> None:
    app = typer.Typer()
    app.command()(nasi)
    app.command("unused")(lambda: None)  # a second command keeps `nasi` as a subcommand
    out = tmp_path / "export"
    args = ["nasi", "--dataset", "digits", "--steps", "3", "--batch-size", "16", "--json", "--out", str(out)]
    args += ["--supernet-option", "C=4", "--supernet-option", "N=1", "-o", "calibration_samples=3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    g = load_genotype(out / "genotype.safetensors")
    assert summary["best_genotype"]["choices"] == list(g.choices)
    onnx = inspect_file(out / "model.onnx")
    assert onnx["inputs"][0]["shape"][1:] == [1, 8, 8]
    assert summary["max_abs_diff"] <= 1e-4
    assert summary["build"] == {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}

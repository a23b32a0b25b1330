"""From the command line: Eigen-NAS on mlp-res with digits, its export, its resume; DARTS on mlp-res."""

from __future__ import annotations

import json

import onnx
import pytest

from nasforge.run.journal_file import JournalReader
from nasforge.tools.export import load_genotype
from nasforge_eigennas import MLPResSpace
from nasforge_eigennas.plugin import CANDIDATES_FILE

EIGENNAS = [
    "search",
    "--space",
    "mlp-res",
    "--strategy",
    "eigennas",
    "--evaluator",
    "short-train",
    "--dataset",
    "digits",
]
SMALL = ["-o", "sample_size=12", "-o", "top_k=3", "-o", "batch_size=8", "--evaluator-option", "epochs=1"]


@pytest.mark.slow
def test_eigennas_search_on_digits_prints_and_exports(cli, tmp_path) -> None:
    run = cli(
        *EIGENNAS,
        *SMALL,
        "--run-dir",
        tmp_path / "run",
        "--export",
        tmp_path / "out",
        "-q",
        "--json",
        ok=True,
    )
    out = run.json()
    space = MLPResSpace()
    best = space.parse(out["best"])
    assert out["trials"] == 3 and out["objective"] == "valid_accuracy"
    assert load_genotype(tmp_path / "out" / "genotype.safetensors", space) == best
    onnx.checker.check_model(onnx.load(out["onnx_file"]))
    assert out["onnx_max_abs_diff"] < 1e-4
    rows = [json.loads(line) for line in (tmp_path / "run" / CANDIDATES_FILE).read_text().splitlines()]
    assert [r["genotype"] for r in rows if r["chosen"]] == [out["best"]]
    assert sum(r["fitness"] is not None for r in rows) == 3


@pytest.mark.slow
def test_eigennas_prints_its_candidate_table(cli, tmp_path) -> None:
    run = cli(*EIGENNAS, *SMALL, "--run-dir", tmp_path / "run", ok=True)
    assert "eigennas: 12 candidates by eigennas_trace, top 3 evaluated" in run.err
    assert "chosen" in run.err and "search finished" in run.out


def test_eigennas_resumes_and_takes_the_depth_and_the_free_score(cli, tmp_path) -> None:
    argv = [*EIGENNAS, *SMALL, "--space-option", "depth=5", "-o", "metric=eigennas_ntk_diag", "-q", "--json"]
    first = cli(*argv, "--run-dir", tmp_path / "run", ok=True).json()
    assert len(MLPResSpace(depth=5).parse(first["best"]).choices) == 7
    again = cli("resume", tmp_path / "run", "-q", "--json", ok=True).json()
    assert again["best"] == first["best"] and len(JournalReader.of_run(tmp_path / "run").trials) == 3


def test_bad_eigennas_options_are_one_line(cli, tmp_path) -> None:
    cli(*EIGENNAS, "-o", "top_k=0", "--run-dir", tmp_path / "a").assert_one_line_error("top_k")
    cli(*EIGENNAS, "-o", "top_k=many", "--run-dir", tmp_path / "b").assert_one_line_error("top_k")
    cli(*EIGENNAS, "--space-option", "depth=2", "--run-dir", tmp_path / "c").assert_one_line_error("depth")
    cli(*EIGENNAS, "-o", "metric=nope", "--run-dir", tmp_path / "d").assert_one_line_error("nope")


def test_darts_searches_mlp_res_from_the_command_line(cli, tmp_path) -> None:
    argv = ["search", "--space", "mlp-res", "--strategy", "darts", "--train-data", "digits"]
    opts = ["-o", "epochs=2", "-o", "max_batches=3", "-o", "batch_size=32", "-o", 'supernet={"width": 32}']
    out = cli(*argv, *opts, "--run-dir", tmp_path / "run", "-q", "--json", ok=True).json()
    MLPResSpace().parse(out["best"])
    assert out["trials"] == 2


def test_without_an_evaluator_a_space_the_table_lacks_is_trained_by_short_train(cli, tmp_path) -> None:
    """The issue's command as written: no --evaluator; nb201-table cannot hold mlp-res."""
    argv = ["search", "--space", "mlp-res", "--strategy", "eigennas", "--dataset", "digits", *SMALL]
    run = cli(*argv, "--run-dir", tmp_path / "run", "--export", tmp_path / "out", ok=True)
    assert "cannot serve space 'mlp-res'" in run.err and "'short-train'" in run.err
    assert "has nothing more to propose: finished after 3 trials" in run.err
    assert "exhausted" not in run.err
    assert (tmp_path / "out" / "genotype.safetensors").is_file() and (
        tmp_path / "out" / "model.onnx"
    ).is_file()
    assert JournalReader.of_run(tmp_path / "run").header["spec"]["evaluator"] == "short-train"

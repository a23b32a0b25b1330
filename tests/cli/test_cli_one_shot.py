"""`nasforge search` runs one-shot strategies too: journal, evaluation, export, resume."""

from __future__ import annotations

import pytest

from nasforge.run.journal_file import JournalReader
from nasforge.tools.export import load_genotype

TINY = ["-o", 'supernet={"C": 4, "N": 1}', "-o", "epochs=2", "-o", "max_batches=2", "-o", "batch_size=16"]
DARTS = ["search", "--space", "nb201", "--strategy", "darts", "-q"]


@pytest.mark.slow
def test_darts_on_nb201_digits_exports_and_evaluates(cli, tmp_path) -> None:
    out = cli(
        *DARTS,
        "--dataset",
        "digits",
        *TINY,
        "--evaluator",
        "nb201-table",
        "--evaluator-option",
        "dataset=cifar100",
        "--run-dir",
        tmp_path / "run",
        "--export",
        tmp_path / "x",
        "--json",
        ok=True,
    ).json()
    assert out["trials"] == 2 and out["data"] == "digits"
    assert 0 < out["evaluation"]["test_accuracy"] < 100
    assert out["onnx_max_abs_diff"] <= 1e-4
    assert load_genotype(out["genotype_file"]).space == "nb201" and out["best"].startswith("|")
    reader = JournalReader.of_run(tmp_path / "run")
    assert reader.header["mode"] == "one-shot" and len(reader.trials) == 2 and reader.end is not None
    again = cli("resume", tmp_path / "run", "-q", "--json", ok=True).json()  # finished: re-reads only
    assert again["best"] == out["best"]


def test_one_shot_refuses_a_trial_budget(cli, tmp_path) -> None:
    cli(*DARTS, "--budget-trials", "5", "--run-dir", tmp_path).assert_one_line_error("-o epochs=N")


def test_one_shot_unknown_option_is_one_line(cli, tmp_path) -> None:
    cli(*DARTS, "-o", "epohcs=2", "--run-dir", tmp_path).assert_one_line_error("epohcs")

"""`nasforge search` runs one-shot strategies too: journal, evaluation, export, resume."""

from __future__ import annotations

import json

import pytest

from nasforge.cli import main
from nasforge.export import load_genotype
from nasforge.journal import JournalReader

TINY = ["-o", 'supernet={"C": 4, "N": 1}', "-o", "epochs=2", "-o", "max_batches=2", "-o", "batch_size=16"]


def run_ok(capsys, *argv: str) -> dict:
    try:
        main(list(argv))
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_darts_on_nb201_digits_exports_and_evaluates(capsys, tmp_path) -> None:
    out = run_ok(
        capsys,
        "search",
        "--space",
        "nb201",
        "--strategy",
        "darts",
        "--dataset",
        "digits",
        *TINY,
        "--evaluator",
        "nb201-table",
        "--evaluator-option",
        "dataset=cifar100",
        "--run-dir",
        str(tmp_path / "run"),
        "--export",
        str(tmp_path / "x"),
        "-q",
        "--json",
    )
    assert out["epochs"] == 2 and out["data"] == "digits"
    assert 0 < out["evaluation"]["test_accuracy"] < 100
    assert out["onnx_max_abs_diff"] <= 1e-4
    g = load_genotype(out["genotype_file"])
    assert out["best"].startswith("|") and g.space == "nb201"
    reader = JournalReader.of_run(tmp_path / "run")
    assert reader.header["mode"] == "one-shot" and len(reader.trials) == 2 and reader.end is not None

    again = run_ok(capsys, "resume", str(tmp_path / "run"), "-q", "--json")  # finished: just re-reads
    assert again["best"] == out["best"]


def test_one_shot_refuses_a_trial_budget(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "search",
                "--space",
                "nb201",
                "--strategy",
                "darts",
                "--budget-trials",
                "5",
                "-q",
                "--run-dir",
                str(tmp_path),
            ]
        )
    assert exc.value.code == 2
    assert "-o epochs=N" in capsys.readouterr().err


def test_one_shot_unknown_option_is_one_line(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "search",
                "--space",
                "nb201",
                "--strategy",
                "darts",
                "-o",
                "epohcs=2",
                "-q",
                "--run-dir",
                str(tmp_path),
            ]
        )
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "epohcs" in err and "Traceback" not in err and len(err.splitlines()) == 1

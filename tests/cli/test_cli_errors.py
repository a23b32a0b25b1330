"""Bad input gets one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from safetensors.torch import save_file

from nasforge.run.journal_file import journal_path

# rea named: its options are what these cases get wrong (the default may be another)
TOY = ["search", "--space", "toy", "--strategy", "rea", "--evaluator", "toy", "-q"]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--space", "tyo"], ["unknown search space 'tyo'", "did you mean 'toy'"]),
        (["--strategy", "reaa"], ["unknown strategy", "'rea'"]),
        (["--evaluator", "tox"], ["unknown evaluator 'tox'", "did you mean 'toy'"]),
        (["--budget-trials", "0"], ["budget trials must be positive"]),
        (["-o", "population_size"], ["key=value"]),
        (["-o", "population_size=1"], ["population_size >= 2"]),
        (["-o", "populaton_size=3"], ["does not accept", "populaton_size", "did you mean 'population_size'"]),
    ],
)
def test_search_errors(cli, tmp_path, args, needles) -> None:
    cli(*TOY, "--run-dir", tmp_path / "r", *args).assert_one_line_error(*needles)


def test_malformed_genotype_string(cli, tmp_path) -> None:
    cli("export", "linear-skip-skip", "--space", "toy", "--out", tmp_path).assert_one_line_error(
        "needs 4 ops"
    )
    cli("export", "linear-skip-skip-lnear", "--space", "toy", "--out", tmp_path).assert_one_line_error(
        "did you mean 'linear'"
    )


@pytest.mark.slow
def test_corrupt_and_foreign_safetensors(cli, tmp_path) -> None:
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not a header")
    cli("inspect", corrupt).assert_one_line_error("not a readable safetensors file")
    foreign = tmp_path / "weights.safetensors"
    save_file({"w": torch.zeros(2)}, str(foreign))
    cli("inspect", foreign).assert_one_line_error("not a nasforge genotype")
    cli("export", foreign, "--out", tmp_path / "o").assert_one_line_error("not a nasforge genotype")


@pytest.mark.slow
def test_journal_from_another_space(cli, tmp_path) -> None:
    run = [*TOY, "--budget-trials", "5", "--run-dir", tmp_path / "run"]
    cli(*run, ok=True)
    path = journal_path(tmp_path / "run")
    path.write_text(path.read_text().replace('"name": "toy"', '"name": "nb201"', 1))
    cli(*run).assert_one_line_error("from space 'nb201', not 'toy'")


def test_resume_missing_journal(cli, tmp_path) -> None:
    cli("resume", tmp_path).assert_one_line_error("no journal")


@pytest.mark.slow
def test_no_traceback_in_a_real_process(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nasforge", "search", "--space", "nb2O1", "-q", "--run-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "unknown search space 'nb2O1'; did you mean 'nb201'?" in proc.stderr

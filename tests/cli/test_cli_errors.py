"""Bad input gets one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nasforge.cli import main
from nasforge.journal import journal_path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--space", "tyo", "--evaluator", "toy"], ["unknown search space 'tyo'", "did you mean 'toy'"]),
        (["--space", "toy", "--evaluator", "toy", "--strategy", "reaa"], ["unknown strategy", "'rea'"]),
        (["--space", "toy", "--evaluator", "tox"], ["unknown evaluator 'tox'", "did you mean 'toy'"]),
        (
            ["--space", "toy", "--evaluator", "toy", "--budget-trials", "0"],
            ["budget trials must be positive"],
        ),
        (["--space", "toy", "--evaluator", "toy", "-o", "population_size"], ["key=value"]),
        (["--space", "toy", "--evaluator", "toy", "-o", "population_size=1"], ["population_size >= 2"]),
    ],
)
def test_search_errors(capsys, tmp_path, args, needles) -> None:
    code, _, err = run_cli(capsys, "search", "--run-dir", str(tmp_path / "r"), "-q", *args)
    assert_one_line_error(code, err, *needles)


def test_unknown_strategy_option(capsys, tmp_path) -> None:
    code, _, err = run_cli(
        capsys,
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "-q",
        "--run-dir",
        str(tmp_path),
        "-o",
        "populaton_size=3",
    )
    assert_one_line_error(code, err, "does not accept", "populaton_size")


def test_malformed_genotype_string(capsys, tmp_path) -> None:
    code, _, err = run_cli(capsys, "export", "linear-skip-skip", "--space", "toy", "--out", str(tmp_path))
    assert_one_line_error(code, err, "needs 4 ops")
    code, _, err = run_cli(
        capsys, "export", "linear-skip-skip-lnear", "--space", "toy", "--out", str(tmp_path)
    )
    assert_one_line_error(code, err, "did you mean 'linear'")


def test_corrupt_and_foreign_safetensors(capsys, tmp_path) -> None:
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not a header")
    code, _, err = run_cli(capsys, "inspect", str(corrupt))
    assert_one_line_error(code, err, "not a readable safetensors file")

    import torch
    from safetensors.torch import save_file

    foreign = tmp_path / "weights.safetensors"
    save_file({"w": torch.zeros(2)}, str(foreign))
    code, _, err = run_cli(capsys, "inspect", str(foreign))
    assert_one_line_error(code, err, "not a nasforge genotype")
    code, _, err = run_cli(capsys, "export", str(foreign), "--out", str(tmp_path / "o"))
    assert_one_line_error(code, err, "not a nasforge genotype")


def test_journal_from_another_space(capsys, tmp_path) -> None:
    run_dir = tmp_path / "run"
    code, _, _ = run_cli(
        capsys,
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--budget-trials",
        "5",
        "-q",
        "--run-dir",
        str(run_dir),
    )
    assert code == 0
    text = journal_path(run_dir).read_text().replace('"name": "toy"', '"name": "nb201"', 1)
    journal_path(run_dir).write_text(text)
    code, _, err = run_cli(
        capsys,
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--budget-trials",
        "5",
        "-q",
        "--run-dir",
        str(run_dir),
    )
    assert_one_line_error(code, err, "from space 'nb201', not 'toy'")


def test_resume_missing_journal(capsys, tmp_path) -> None:
    code, _, err = run_cli(capsys, "resume", str(tmp_path))
    assert_one_line_error(code, err, "no journal")


def test_no_traceback_in_a_real_process(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nasforge", "search", "--space", "nb2O1", "-q", "--run-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "unknown search space 'nb2O1'" in proc.stderr

"""A journal's end record is checked like its trial records: for an ensemble run it is the
only record of the members, and for any run it names the best (and a front). An edited
or corrupted end record is refused in one line by everything that reads it (export,
inspect, resume), never exported as if the run had found it; journals written before
end records carried a checksum still read."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from nasforge.tools.cli import main
from tests.nesbs_tiny import BUILD, SEARCH

REA = [
    "search",
    "--space",
    "nb201",
    "--strategy",
    "rea",
    "--evaluator",
    "nb201-table",
    "--budget-trials",
    "12",
    "-q",
]
NSGA2 = [
    "search",
    "--space",
    "nb201",
    "--strategy",
    "nsga2",
    "--evaluator",
    "nb201-table",
    "--budget-trials",
    "16",
    "--objective",
    "valid_accuracy:max",
    "--objective",
    "latency_ms:min",
    "-q",
]


def _run(argv: list[object]) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main([str(a) for a in argv])
        except SystemExit as exc:
            assert not exc.code, exc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("end-records")
    out = {"ensemble": root / "ens", "rea": root / "rea", "nsga2": root / "nsga2"}
    _run([*SEARCH, "--run-dir", out["ensemble"]])
    _run([*REA, "--run-dir", out["rea"]])
    _run([*NSGA2, "--run-dir", out["nsga2"]])
    return out


def _edited(run: Path, tmp_path: Path, edit) -> Path:  # noqa: ANN001 - a function of the end record
    """A copy of ``run`` whose end record ``edit`` changed (its other lines as they were)."""
    copy = tmp_path / f"{run.name}-edited"
    copy.mkdir()
    lines = (run / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    end = json.loads(lines[-1])
    assert end["type"] == "end"
    edit(end)
    lines[-1] = json.dumps(end, sort_keys=True)
    (copy / "journal.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return copy


def _swap_first_two_ops(genotype: dict) -> None:
    choices = genotype["choices"]
    i = next(k for k in range(1, len(choices)) if choices[k] != choices[0])
    choices[0], choices[i] = choices[i], choices[0]


def _refused(cli, *argv: object) -> None:  # noqa: ANN001 - the cli fixture
    run = cli(*argv)
    run.assert_one_line_error("end record")


@pytest.mark.slow
def test_an_edited_ensemble_member_is_refused(cli, runs, tmp_path) -> None:
    edited = _edited(
        runs["ensemble"], tmp_path, lambda end: _swap_first_two_ops(end["ensemble"]["members"][0])
    )
    _refused(cli, "export", edited, "--out", tmp_path / "out", *BUILD)
    _refused(cli, "inspect", edited)
    assert not (tmp_path / "out").exists(), "nothing is exported from an edited record"


@pytest.mark.slow
def test_an_edited_best_and_front_are_refused(cli, runs, tmp_path) -> None:
    best = _edited(runs["rea"], tmp_path, lambda end: _swap_first_two_ops(end["best"]))
    _refused(cli, "export", best, "--out", tmp_path / "out", "--no-onnx")
    _refused(cli, "inspect", best)
    _refused(cli, "resume", best)
    front = _edited(runs["nsga2"], tmp_path, lambda end: _swap_first_two_ops(end["front"][0]["genotype"]))
    _refused(cli, "inspect", front)


def test_a_removed_checksum_is_refused(cli, runs, tmp_path) -> None:
    edited = _edited(runs["rea"], tmp_path, lambda end: end.pop("checksum", None))
    _refused(cli, "inspect", edited)


@pytest.mark.slow
def test_the_untouched_runs_read(cli, runs, tmp_path) -> None:
    for name, run in runs.items():
        assert cli("inspect", run, "--json").code == 0, name
    assert cli("export", runs["rea"], "--out", tmp_path / "out", "--no-onnx", "-q").code == 0

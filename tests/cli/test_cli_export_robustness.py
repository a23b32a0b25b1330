"""`export`, `score` and `inspect` on long strings, damaged files and damaged run journals.

Issue 8: defect 3 (a DARTS genotype string is longer than a file name may be), 6 (a
failed export leaves nothing) and 11 (genotype file codes and metadata, run journals
lacking a key): one line on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import json
import random

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from nasforge.api import load_space
from nasforge.run.journal_file import CHECKSUM_KEY, END_CHECKSUM_DECLARATION, journal_path
from nasforge.tools.export import export_genotype, load_genotype

CONV = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|"
SMALL_DARTS = ["--build-option", "C=8", "--build-option", "layers=5", "--build-option", "auxiliary=false"]


@pytest.fixture(scope="module")
def darts_text() -> str:
    space = load_space("darts")
    text = space.format(space.sample(random.Random(1)))
    assert len(text) > 255
    return text


def test_long_darts_string_exports(cli, tmp_path, darts_text) -> None:
    out = cli("export", darts_text, "--space", "darts", "--out", tmp_path, "--no-onnx", "--json", ok=True)
    assert out.json()["text"] == darts_text
    assert load_genotype(tmp_path / "genotype.safetensors") == load_space("darts").parse(darts_text)


def test_long_darts_string_scores(cli, darts_text) -> None:
    argv = ["score", darts_text, "--space", "darts", "-m", "params", "--no-cache", "-q", "--json"]
    payload = cli(*argv, *SMALL_DARTS, ok=True).json()
    (row,) = payload["rows"]
    assert row["text"] == darts_text


def test_long_non_genotype_string_is_a_parse_error(cli, tmp_path) -> None:
    text = "|" + "x" * 400 + "|"
    cli("export", text, "--space", "nb201", "--out", tmp_path).assert_one_line_error("NAS-Bench-201")
    cli("score", text, "--space", "nb201", "-m", "params").assert_one_line_error("NAS-Bench-201")


def test_missing_safetensors_path_says_no_such_file(cli, tmp_path) -> None:
    missing = tmp_path / "nope.safetensors"
    cli("export", missing, "--out", tmp_path / "o").assert_one_line_error("no such file")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "needle"),
    [(["--build-option", "C=0"], "C must be a positive int"), (["--input-shape", "1,3"], "input shape")],
)
def test_failed_export_leaves_nothing(cli, tmp_path, options, needle) -> None:
    out = tmp_path / "export"
    cli("export", CONV, "--space", "nb201", "--out", out, *options).assert_one_line_error(needle)
    assert not out.exists()


def _rewrite_genotype(path, *, codes=None, **meta_changes: str) -> None:
    with safe_open(str(path), framework="pt") as fh:
        meta = dict(fh.metadata())
    tensors = load_file(str(path))
    if codes is not None:
        tensors["choices"] = torch.tensor(codes, dtype=torch.int64)
    meta.update(meta_changes)
    save_file(tensors, str(path), metadata=meta)


def test_genotype_file_with_code_minus_one_is_refused(cli, tmp_path) -> None:
    space = load_space("nb201")
    path = export_genotype(space.parse(CONV), tmp_path / "g.safetensors", space)
    codes = load_file(str(path))["choices"].tolist()
    _rewrite_genotype(path, codes=[*codes[:-1], -1])
    refused = "name code -1 out of range"
    cli("export", path, "--out", tmp_path / "o", "--no-onnx").assert_one_line_error(refused)
    cli("inspect", path).assert_one_line_error(refused)
    assert not (tmp_path / "o").exists()


def test_op_names_metadata_not_json_is_one_line(cli, tmp_path) -> None:
    space = load_space("nb201")
    path = export_genotype(space.parse(CONV), tmp_path / "g.safetensors", space)
    _rewrite_genotype(path, op_names="{{{ not json")
    cli("inspect", path).assert_one_line_error("op_names metadata is not JSON")


@pytest.fixture
def toy_run(cli, tmp_path):
    run = tmp_path / "run"
    argv = ["search", "--space", "toy", "--evaluator", "toy", "--strategy", "random", "--budget-trials", "4"]
    cli(*argv, "-q", "--run-dir", run, ok=True)
    return run


def _edit_journal(run, kind: str, edit, *, as_older: bool = True) -> None:
    """Edit the journal's ``kind`` records; an edited end record ``as_older`` is one of a
    journal written before end records carried a checksum (so the reader's structural
    checks, not the checksum, meet the damage)."""
    path = journal_path(run)
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if kind == "end" and as_older:
            record.pop(END_CHECKSUM_DECLARATION, None)
            if record["type"] == "end":
                record.pop(CHECKSUM_KEY, None)
        if record["type"] == kind:
            edit(record)
        lines[i] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("kind", "edit", "needle"),
    [
        ("header", lambda r: r.pop("space"), "lacks the key 'space'"),
        ("header", lambda r: r.update(space="toy"), "header field 'space' must be an object"),
        ("end", lambda r: r["best"].pop("version"), "lacks the key 'version'"),
        ("end", lambda r: r.update(best=["toy"]), "malformed header or end record"),
    ],
)
def test_run_dir_with_a_damaged_record_is_one_line(cli, toy_run, tmp_path, kind, edit, needle) -> None:
    _edit_journal(toy_run, kind, edit)
    out = tmp_path / "x"
    cli("export", toy_run, "--out", out, "--no-onnx").assert_one_line_error(needle)
    assert not out.exists()


def test_a_damaged_end_of_a_checked_journal_is_refused_by_its_checksum(cli, toy_run, tmp_path) -> None:
    _edit_journal(toy_run, "end", lambda r: r["best"].pop("version"), as_older=False)
    out = tmp_path / "x"
    cli("export", toy_run, "--out", out, "--no-onnx").assert_one_line_error("end record fails its checksum")
    assert not out.exists()


def _drop_end(run) -> None:
    path = journal_path(run)
    lines = [line for line in path.read_text().splitlines() if json.loads(line)["type"] != "end"]
    path.write_text("\n".join(lines) + "\n")  # no end record: the best is chosen by the goal


def test_run_dir_objective_lacking_its_name_is_one_line(cli, toy_run, tmp_path) -> None:
    """An older journal (no goal, only the evaluator's objective) whose objective lost its name."""
    _drop_end(toy_run)
    _edit_journal(toy_run, "header", lambda r: (r.pop("goal"), r["objective"].pop("name")))
    cli("export", toy_run, "--out", tmp_path / "x", "--no-onnx").assert_one_line_error("malformed header")


@pytest.mark.parametrize(
    "goal",
    [
        {"objectives": [5]},
        {"objectives": ["score:up"]},
        {"objectives": ["score:max"], "constraints": ["x<5"]},
        [],
    ],
)
def test_run_dir_with_a_damaged_goal_is_one_line(cli, toy_run, tmp_path, goal) -> None:
    _drop_end(toy_run)
    _edit_journal(toy_run, "header", lambda r: r.update(goal=goal))
    cli("export", toy_run, "--out", tmp_path / "x", "--no-onnx").assert_one_line_error("malformed header")
    cli("inspect", toy_run).assert_one_line_error("malformed header")


@pytest.mark.parametrize(
    ("plot", "needle"),
    [("c.pgn", "cannot write a plot as '.pgn' (supported: "), (".", "is a directory")],
)
def test_correlate_refuses_a_bad_plot_path_before_scoring(cli, tmp_path, monkeypatch, plot, needle) -> None:
    """A typo in --plot costs one line, not the scoring that would come before the plot."""
    pytest.importorskip("matplotlib")
    import nasforge.tools.scoring

    def no_scoring(*args, **kwargs):
        raise AssertionError("correlate scored before checking --plot")

    monkeypatch.setattr(nasforge.tools.scoring, "correlate", no_scoring)
    argv = ["correlate", "--space", "nb201", "-m", "params", "--sample", "4", "--no-cache"]
    cli(*argv, "--plot", tmp_path / plot).assert_one_line_error(needle)
    assert list(tmp_path.iterdir()) == []

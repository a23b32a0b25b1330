from __future__ import annotations

import json

import pytest

from nasforge.cli import main


def run_ok(capsys, *argv: str) -> str:
    try:
        main(list(argv))
    except SystemExit as exc:  # typer exits 0 explicitly after some commands
        assert not exc.code, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["spaces", "strategies", "evaluators", "datasets", "metrics", "plugins"])
def test_listings_json(capsys, command: str) -> None:
    rows = json.loads(run_ok(capsys, command, "--json"))
    assert isinstance(rows, list)


def test_spaces_lists_toy(capsys) -> None:
    rows = json.loads(run_ok(capsys, "spaces", "--json"))
    toy = next(r for r in rows if r["name"] == "toy")
    assert "enumerate" in toy["capabilities"]


def test_search_json_then_export_and_inspect(capsys, tmp_path) -> None:
    out = run_ok(
        capsys,
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--strategy",
        "random",
        "--budget-trials",
        "20",
        "-q",
        "--json",
        "--run-dir",
        str(tmp_path / "run"),
    )
    result = json.loads(out)
    assert result["trials"] == 20
    exported = json.loads(
        run_ok(capsys, "export", str(tmp_path / "run"), "--out", str(tmp_path / "x"), "--no-onnx", "--json")
    )
    assert exported["text"] == result["best"]
    info = json.loads(run_ok(capsys, "inspect", exported["genotype"], "--json"))
    assert info["text"] == result["best"] and info["space"] == "toy"
    info = json.loads(run_ok(capsys, "inspect", str(tmp_path / "run"), "--json"))
    assert info["finished"] and info["trials"] == 20


def test_help_teaches(capsys) -> None:
    out = run_ok(capsys, "search", "--help")
    assert "resume" in out and "--budget-trials" in out

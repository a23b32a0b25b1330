"""Every ``--json`` document names its schema, ``"nasforge.<command>/<version>"`` (issue 10),
and every command that has ``--json`` is documented in ``docs/json-output.md``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer

from nasforge.kernel.registry import get_registry
from nasforge.tools.cli import app
from nasforge.tools.cli.output import SCHEMA_FIELD, json_document, schema_name, set_running_command
from nasforge.tools.cli.plugin_commands import mount_plugin_commands

DOC = Path(__file__).resolve().parents[2] / "docs" / "json-output.md"
LISTINGS = ("plugins", "spaces", "metrics", "strategies", "evaluators", "datasets", "executors")
SMALL = ["--build-option", "C=4", "--build-option", "N=1", "--batch-size", "8", "-q"]
#: The commands whose documents the tests below check.
CHECKED = {
    *LISTINGS,
    "search",
    "resume",
    "train",
    "export",
    "inspect",
    "score",
    "correlate",
    "darts-compare",
    "darts-train",
    "insight",
}


def json_commands() -> set[str]:
    """Every command of the CLI (plugin commands mounted) that takes ``--json``."""
    mount_plugin_commands(app, get_registry())
    group = typer.main.get_command(app)
    return {
        name
        for name, command in group.commands.items()  # type: ignore[attr-defined]
        if any("--json" in p.opts for p in command.params)
    }


def documented_commands() -> set[str]:
    return set(re.findall(r"^### `nasforge ([a-z-]+)`", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE))


def test_every_json_command_is_checked_and_documented() -> None:
    commands = json_commands()
    assert commands == CHECKED, "a command gained or lost --json: check it here and document it"
    assert documented_commands() == commands


def test_the_schema_field_is_added_in_one_place() -> None:
    assert schema_name("search") == "nasforge.search/1"
    assert json_document({"a": 1}, command="x") == {SCHEMA_FIELD: "nasforge.x/1", "a": 1}
    assert json_document([1, 2], command="x", version=2) == {SCHEMA_FIELD: "nasforge.x/2", "items": [1, 2]}
    with pytest.raises(ValueError, match="own 'schema'"):
        json_document({SCHEMA_FIELD: "mine"}, command="x")
    set_running_command(None)  # as after an invocation (a Typer test runner may leave one set)
    with pytest.raises(ValueError, match="needs command="):
        json_document({"a": 1})  # outside a command nothing names it


def _schema(document: object, command: str) -> dict:
    assert isinstance(document, dict) and document[SCHEMA_FIELD] == f"nasforge.{command}/1", document
    return document


@pytest.mark.parametrize("command", LISTINGS)
def test_listings(cli, command: str) -> None:
    assert _schema(cli(command, "--json", ok=True).json(), command)["items"]


def test_search_resume_export_inspect(cli, tmp_path) -> None:
    run = tmp_path / "run"
    argv = ["search", "--space", "toy", "--evaluator", "toy", "--strategy", "random", "--budget-trials", "5"]
    searched = _schema(cli(*argv, "-q", "--json", "--run-dir", run, ok=True).json(), "search")
    assert searched["trials"] == 5
    resumed = _schema(cli("resume", run, "-q", "--json", ok=True).json(), "resume")
    assert resumed["best"] == searched["best"]
    exported = _schema(
        cli("export", run, "--out", tmp_path / "x", "--no-onnx", "--json", ok=True).json(), "export"
    )
    inspected = _schema(cli("inspect", run, "--json", ok=True).json(), "inspect")
    assert inspected["strategy"] == searched["strategy"] == "random"
    assert inspected["strategy_default"] is searched["strategy_default"] is False
    assert inspected["best_score"] == {"score": searched["value"]}
    train = ["train", searched["best"], "--space", "toy", "--train-data", "gaussian", "--epochs", "1"]
    train += ["--build-option", "in_features=3072", "--checkpoint-dir", tmp_path / "t", "-q", "--json"]
    trained = _schema(cli(*train, ok=True).json(), "train")
    assert trained["epochs"] == 1 and trained["heldout"]["examples"] > 0
    assert (
        _schema(cli("inspect", exported["genotype"], "--json", ok=True).json(), "inspect")["kind"]
        == "genotype"
    )


@pytest.mark.slow
def test_score_and_correlate(cli) -> None:
    scored = cli(
        "score", "--space", "nb201", "--sample", "2", "-m", "params", *SMALL, "--no-cache", "--json", ok=True
    )
    assert len(_schema(scored.json(), "score")["rows"]) == 2
    correlated = cli(
        "correlate", "--space", "nb201", "-m", "params", "--sample", "6", *SMALL, "--no-cache", "--json"
    )
    assert _schema(correlated.json(), "correlate")["sample"] == 6


def test_darts_compare_prints_and_writes_the_schema(cli, tmp_path) -> None:
    argv = ["darts-compare", "--seeds", "0", "--epochs", "1", "--C", "2", "--table-dataset", "cifar10"]
    argv += ["-o", "max_batches=1", "--json", "--json-file", tmp_path / "rows.json"]
    printed = _schema(cli(*argv, ok=True).json(), "darts-compare")
    assert json.loads((tmp_path / "rows.json").read_text()) == printed


def test_darts_train_prints_and_writes_the_schema(cli, tmp_path) -> None:
    argv = ["darts-train", "--genotype", "DARTS-V2", "--epochs", "1", "-o", "C=4", "-o", "max_batches=1"]
    printed = _schema(cli(*argv, "--out", tmp_path / "run", "--json", "-q", ok=True).json(), "darts-train")
    assert json.loads((tmp_path / "run" / "result.json").read_text()) == printed


@pytest.mark.slow
def test_insight_prints_and_writes_the_schema(cli, tmp_path) -> None:
    cell = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"
    argv = ["insight", cell, "--build-option", "C=4", "--build-option", "N=1", "--epochs", "1"]
    argv += ["--limit", "120", "--samples", "16", "--grid", "2", "--out", tmp_path / "r", "--json", "-q"]
    printed = _schema(cli(*argv, ok=True).json(), "insight")
    assert json.loads((tmp_path / "r" / "report.json").read_text()) == printed

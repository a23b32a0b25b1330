"""The command line is a face of the Python API: each refusal of ``search`` and ``resume``
is made once, below both, with one message.

Every case drives the same mistake through ``nasforge search``/``resume`` and through
``nasforge.api.search``/``resume`` and compares the two messages; and the CLI's search
and resume module holds no refusal of its own.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from nasforge import api
from nasforge.kernel.errors import NasforgeError
from nasforge.run.advice import cli_message
from nasforge.tools.cli import search_cmd
from tests.cli_run import one_line

TINY_DARTS = {"supernet": {"C": 4, "N": 1}, "epochs": 1, "max_batches": 1, "batch_size": 16}
DARTS_CLI = ["--space", "nb201", "--strategy", "darts", "--train-data", "digits"]
TOY_CLI = ["--space", "toy", "--strategy", "random", "--evaluator", "toy"]
TOY = {"space": "toy", "strategy": "random", "evaluator": "toy"}

#: (case, CLI arguments after `search`, api.search keywords)
SEARCH_REFUSALS: list[tuple[str, list[str], dict[str, Any]]] = [
    (
        "a one-shot search given asynchronous evaluation",
        [*DARTS_CLI, "--async"],
        {"space": "nb201", "strategy": "darts", "train_data": "digits", "asynchronous": True},
    ),
    (
        "a one-shot search given retries",
        [*DARTS_CLI, "--retries", "3"],
        {"space": "nb201", "strategy": "darts", "train_data": "digits", "retries": 3},
    ),
    (
        "a one-shot search given an executor option",
        [*DARTS_CLI, "--executor-option", "threads=1"],
        {"space": "nb201", "strategy": "darts", "train_data": "digits", "executor_options": {"threads": 1}},
    ),
    (
        "a one-shot search given a budget",
        [*DARTS_CLI, "--budget-trials", "5"],
        {"space": "nb201", "strategy": "darts", "train_data": "digits", "trials": 5},
    ),
    (
        "an executor option the executor does not take",
        [*TOY_CLI, "--executor-option", "address=x:1"],
        {**TOY, "executor_options": {"address": "x:1"}},
    ),
    (
        "a device for a run that takes none",
        [*TOY_CLI, "--device", "cpu"],
        {**TOY, "device": "cpu"},
    ),
    (
        "several objectives for a single-objective strategy",
        [*TOY_CLI, "--objective", "score:max", "--objective", "size:min"],
        {**TOY, "objectives": ["score:max", "size:min"]},
    ),
    (
        "an evaluator that cannot serve the space",
        ["--space", "nb201", "--strategy", "random", "--evaluator", "toy"],
        {"space": "nb201", "strategy": "random", "evaluator": "toy"},
    ),
    (
        "an unknown strategy option",
        [*TOY_CLI, "-o", "populaton_size=3"],
        {**TOY, "strategy_options": {"populaton_size": 3}},
    ),
    (
        "a run-supplied field given as an option",
        ["--space", "toy", "--strategy", "median", "--evaluator", "toy", "-o", "registry=x"],
        {"space": "toy", "strategy": "median", "evaluator": "toy", "strategy_options": {"registry": "x"}},
    ),
]


def _api_message(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(NasforgeError) as caught:
        call(*args, **kwargs)
    return cli_message(caught.value)


@pytest.mark.parametrize(("case", "argv", "keywords"), SEARCH_REFUSALS, ids=[c[0] for c in SEARCH_REFUSALS])
def test_search_refuses_as_the_api_does(
    cli: Any, tmp_path: Path, case: str, argv: list[str], keywords: dict
) -> None:
    run_dir = tmp_path / "run"
    line = one_line(cli("search", *argv, "--run-dir", run_dir).err)
    message = _api_message(api.search, **keywords, run_dir=tmp_path / "api")
    assert line == f"error: {message}", case
    assert not run_dir.exists() and not (tmp_path / "api").exists(), "refused before anything was written"


@pytest.fixture(scope="module")
def one_shot_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("one-shot") / "run"
    api.search("nb201", "darts", train_data="digits", strategy_options=TINY_DARTS, run_dir=run_dir)
    return run_dir


@pytest.mark.parametrize(
    ("argv", "keywords"),
    [
        (["--retries", "3"], {"retries": 3}),
        (["--executor-option", "threads=1"], {"executor_options": {"threads": 1}}),
    ],
)
def test_resume_refuses_as_the_api_does(
    cli: Any, one_shot_run: Path, argv: list[str], keywords: dict
) -> None:
    line = one_line(cli("resume", one_shot_run, *argv).err)
    message = _api_message(api.resume, one_shot_run, **keywords)
    assert line == f"error: {message}"
    assert "'darts' is one-shot" in message


def test_resume_of_no_run_refuses_as_the_api_does(cli: Any, tmp_path: Path) -> None:
    line = one_line(cli("resume", tmp_path / "nowhere").err)
    assert line == f"error: {_api_message(api.resume, tmp_path / 'nowhere')}"


def test_the_cli_search_module_makes_no_refusal_of_its_own() -> None:
    """It parses and prints: no ``raise`` and no error type of its own; refusals are the API's."""
    tree = ast.parse(inspect.getsource(search_cmd))
    raises = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    assert raises == [], f"search_cmd raises at lines {raises}"
    imported = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert "NasforgeError" not in imported and "OptionError" not in imported

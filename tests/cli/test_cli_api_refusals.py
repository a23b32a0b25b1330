"""The command line is a face of the Python API: each refusal of ``search``, ``resume``,
``score``, ``correlate`` and ``export`` is made once, below both, with one message.

Every case drives the same mistake through the command and through its ``nasforge.api``
twin and compares the two messages (the command line's spelling of the settings it
names: ``--sample`` where Python says ``sample``); and the CLI modules of these commands
hold no refusal of their own.
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
from nasforge.tools.cli import export_cmd, score_cmd, search_cmd
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


@pytest.mark.slow
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


#: A genotype string of the nb201 space.
NB201 = "|nor_conv_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|"
NO_WORK = ["--no-cache", "-q"]

#: (case, CLI arguments after `score`, api.score keywords)
SCORE_REFUSALS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("nothing to score", ["--space", "toy"], {"space": "toy"}),
    (
        "the whole of a space that cannot list its members",
        ["--space", "darts", "--all"],
        {"space": "darts", "whole_space": True},
    ),
    (
        "an unknown metric",
        ["--space", "toy", "--sample", "2", "-m", "synflw"],
        {"space": "toy", "sample": 2, "metrics": ["synflw"]},
    ),
    ("a sample of none", ["--space", "toy", "--sample", "0"], {"space": "toy", "sample": 0}),
    (
        "a seed torch cannot take",
        ["--space", "toy", "--sample", "1", "--seed", "-1"],
        {"space": "toy", "sample": 1, "seed": -1},
    ),
    (
        "an executor option the in-process runner cannot take",
        ["--space", "toy", "--sample", "2", "-m", "params", "--executor-option", "address=x:1"],
        {"space": "toy", "sample": 2, "metrics": ["params"], "executor_options": {"address": "x:1"}},
    ),
    (
        "workers for the in-process runner",
        ["--space", "toy", "--sample", "2", "-m", "params", "--workers", "2"],
        {"space": "toy", "sample": 2, "metrics": ["params"], "workers": 2},
    ),
    (
        "a genotype of another space",
        [NB201, "--space", "toy", "-m", "params"],
        {"genotypes": [NB201], "space": "toy", "metrics": ["params"]},
    ),
]

#: (case, CLI arguments after `correlate`, api.correlate keywords)
CORRELATE_REFUSALS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("a sample and the whole space", ["--sample", "5", "--all"], {"sample": 5, "whole_space": True}),
    ("a sample too small to rank", ["--sample", "1"], {"sample": 1}),
    ("a plot format that does not exist", ["--plot", "scatter.pgn"], {"plot": "scatter.pgn"}),
    ("an unknown evaluator", ["--evaluator", "nb201-tabel"], {"evaluator": "nb201-tabel"}),
    (
        "the whole of a space that cannot list its members",
        ["--space", "darts", "--all"],
        {"space": "darts", "whole_space": True},
    ),
]

#: (case, CLI arguments after `export` (RUN: the run directory), api.export keywords)
EXPORT_REFUSALS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("a genotype string without its space", [NB201], {"source": NB201}),
    (
        "a Pareto member of a genotype string",
        [NB201, "--space", "nb201", "--member", "0"],
        {"source": NB201, "space": "nb201", "member": 0},
    ),
    (
        "training epochs for a single architecture",
        [NB201, "--space", "nb201", "--train-epochs", "2"],
        {"source": NB201, "space": "nb201", "train_epochs": 2},
    ),
    (
        "negative training epochs",
        [NB201, "--space", "nb201", "--train-epochs", "-1"],
        {"source": NB201, "space": "nb201", "train_epochs": -1},
    ),
    (
        "a negative tolerance",
        [NB201, "--space", "nb201", "--tolerance", "-1"],
        {"source": NB201, "space": "nb201", "tolerance": -1.0},
    ),
    (
        "an input shape with a zero",
        [NB201, "--space", "nb201", "--input-shape", "1,0,32,32"],
        {"source": NB201, "space": "nb201", "input_shape": "1,0,32,32"},
    ),
    ("a Pareto member of a single-objective run", ["RUN", "--member", "0"], {"source": "RUN", "member": 0}),
]


def _compare(cli: Any, command: str, argv: list[str], call: Any, keywords: dict[str, Any]) -> str:
    """The CLI's one line for ``argv`` against the API's message for ``keywords``; the
    Python message speaks Python (no command-line flag in it). Returns the message."""
    line = one_line(cli(command, *argv).err)
    with pytest.raises(NasforgeError) as caught:
        call(**keywords)
    assert line == f"error: {cli_message(caught.value)}"
    assert " --" not in str(caught.value) and not str(caught.value).startswith("--"), str(caught.value)
    return line


@pytest.mark.slow
@pytest.mark.parametrize(("case", "argv", "keywords"), SCORE_REFUSALS, ids=[c[0] for c in SCORE_REFUSALS])
def test_score_refuses_as_the_api_does(cli: Any, case: str, argv: list[str], keywords: dict) -> None:
    _compare(cli, "score", [*argv, *NO_WORK], api.score, {**keywords, "cache": False})


@pytest.mark.parametrize(
    ("case", "argv", "keywords"), CORRELATE_REFUSALS, ids=[c[0] for c in CORRELATE_REFUSALS]
)
def test_correlate_refuses_as_the_api_does(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, argv: list[str], keywords: dict
) -> None:
    monkeypatch.chdir(tmp_path)  # a plot that were written would land here
    _compare(cli, "correlate", [*argv, *NO_WORK], api.correlate, {**keywords, "cache": False})
    assert list(tmp_path.iterdir()) == [], "refused before anything was written"


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("toy") / "run"
    api.search("toy", "random", "toy", trials=3, run_dir=run_dir)
    return run_dir


@pytest.mark.parametrize(("case", "argv", "keywords"), EXPORT_REFUSALS, ids=[c[0] for c in EXPORT_REFUSALS])
def test_export_refuses_as_the_api_does(
    cli: Any, tmp_path: Path, toy_run: Path, case: str, argv: list[str], keywords: dict
) -> None:
    argv = [str(toy_run) if a == "RUN" else a for a in argv]
    keywords = {k: (toy_run if v == "RUN" else v) for k, v in keywords.items()}
    _compare(
        cli,
        "export",
        [*argv, "--out", str(tmp_path / "cli")],
        api.export,
        {**keywords, "out": tmp_path / "api"},
    )
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists(), (
        "refused before anything was written"
    )


@pytest.mark.parametrize(
    "module", [search_cmd, score_cmd, export_cmd], ids=lambda m: m.__name__.rsplit(".", 1)[-1]
)
def test_the_cli_modules_make_no_refusal_of_their_own(module: Any) -> None:
    """They parse and print: no ``raise`` and no error type of their own; refusals are the API's."""
    tree = ast.parse(inspect.getsource(module))
    raises = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    assert raises == [], f"{module.__name__} raises at lines {raises}"
    imported = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert "NasforgeError" not in imported and "OptionError" not in imported

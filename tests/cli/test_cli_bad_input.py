"""Issue 8, part 5: every bad input is one line on stderr and exit 2, never a traceback.

Each case here once escaped as a traceback (found by fuzzing the CLI): wrongly typed or
out-of-range options, DARTS/PR-DARTS and NB201 option validation, filesystem errors, deep
JSON, a journal header with mistyped options and a DARTS genotype that is an expression.
"""

from __future__ import annotations

import errno
import json

import pytest
import typer

import nasforge.tools.cli
from nasforge.kernel.errors import NasforgeError
from nasforge.run.journal_file import journal_path
from nasforge.tools.cli.options import MAX_DEPTH

# rea named: its options are what these cases get wrong (the default may be another)
TOY = ["search", "--space", "toy", "--strategy", "rea", "--evaluator", "toy", "-q", "--budget-trials", "3"]
DARTS = ["search", "--space", "darts", "-q"]
NB201_CELL = "|nor_conv_3x3~0|+|nor_conv_3x3~0|skip_connect~1|+|avg_pool_3x3~0|skip_connect~1|none~2|"


# --- strategy and evaluator options against their declared types ------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("x", "expects an integer, got 'x'"),
        ("null", "expects an integer, got None"),
        ("1e308", "expects an integer, got 1e+308"),
        ("9" * 400, "must fit in 64 bits"),
        ("true", "expects an integer, got True"),  # a bool is no int
        ("2.5", "expects an integer, got 2.5"),
        ("[20]", "expects an integer, got [20]"),
    ],
)
def test_wrongly_typed_strategy_option(cli, tmp_path, value: str, needle: str) -> None:
    run = cli(*TOY, "--run-dir", tmp_path / "r", "-o", f"population_size={value}")
    run.assert_one_line_error("strategy 'rea'", "option 'population_size'", needle)
    assert not (tmp_path / "r").exists()  # refused before anything is written


@pytest.mark.slow
@pytest.mark.parametrize("value", ["1e999", "-1e999", "NaN", "Infinity"])
def test_non_finite_number_option(cli, tmp_path, value: str) -> None:
    short_train = ["search", "--space", "toy", "--evaluator", "short-train", "-q", "--budget-trials", "1"]
    run = cli(*short_train, "--evaluator-option", f"lr={value}", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("evaluator 'short-train'", "option 'lr' expects a finite number")


def test_huge_seed(cli, tmp_path) -> None:
    cli(*TOY, "--run-dir", tmp_path / "r", "--seed", str(10**30)).assert_one_line_error("seed", "64 bits")


# --- DARTS / PR-DARTS option validation ----------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("strategy", "option", "needles"),
    [
        ("darts", "epochs=0", ["strategy 'darts'", "option 'epochs' must be >= 1, got 0"]),
        ("darts", "order=3", ["option 'order' must be one of 1, 2, got 3"]),
        ("darts", "order=true", ["option 'order' must be one of 1, 2, got True"]),
        ("darts", "w_lr=-1", ["option 'w_lr' must be > 0"]),
        ("darts", "w_lr=1e999", ["option 'w_lr' expects a finite number"]),
        ("darts", "w_nesterov=1", ["option 'w_nesterov' expects true or false, got 1"]),
        ("darts", "arch_betas=[0.5]", ["option 'arch_betas' expects a list of 2 numbers"]),
        ("darts", "arch_betas=[0.5, 1.5]", ["option 'arch_betas' must be < 1"]),
        ("darts", "supernet=[1]", ["option 'supernet' expects an object"]),
        ("darts", "config={}", ["option 'config' expects a BilevelConfig or null"]),
        ("darts", "max_batches=0", ["option 'max_batches' must be >= 1"]),
        ("prdarts", "epochs=0", ["strategy 'prdarts'", "option 'epochs' must be >= 1"]),
        ("prdarts", "tau_min=100", ["tau_min", "must not exceed tau_max"]),
        ("prdarts", "preset=nope", ["unknown PR-DARTS preset 'nope'", "official-code"]),
        ("prdarts", "preset=3", ["option 'preset' expects a string, got 3"]),
        ("prdarts", "edge_select=top3", ["option 'edge_select' must be one of"]),
        ("nasi", "steps=0", ["option 'steps' must be >= 1"]),
        ("nasi", "mu=NaN", ["option 'mu' expects a finite number"]),
        ("nasi", "input_shape=[3, 0, 8]", ["option 'input_shape' must be >= 1, got 0"]),
    ],
)
def test_one_shot_option_validation(cli, tmp_path, strategy: str, option: str, needles: list[str]) -> None:
    run = cli(*DARTS, "--strategy", strategy, "-o", option, "--run-dir", tmp_path / "r")
    run.assert_one_line_error(*needles)


def test_bad_supernet_option_fails_in_one_line(cli, tmp_path) -> None:
    run = cli(*DARTS, "--strategy", "darts", "-o", 'supernet={"C": 3}', "--run-dir", tmp_path / "r")
    run.assert_one_line_error("darts supernet", "C must be even")


# --- network build options -----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "needles"),
    [
        ("C=0", ["nb201 network", "C must be a positive int, got 0"]),
        ("N=-1", ["N must be a positive int"]),
        ("C=x", ["option 'C' expects an integer, got 'x'"]),
        ("C=true", ["option 'C' expects an integer, got True"]),
        ("c=8", ["does not accept option 'c'", "did you mean 'C'"]),
        ("C=100000", ["would have about", "parameters"]),  # refused before allocating
        ("num_classes=1099511627776", ["would have about", "parameters"]),
    ],
)
def test_nb201_build_options(cli, tmp_path, option: str, needles: list[str]) -> None:
    run = cli("export", NB201_CELL, "--space", "nb201", "--build-option", option, "--out", tmp_path / "x")
    run.assert_one_line_error(*needles)


@pytest.mark.parametrize(
    ("option", "needles"),
    [
        ("C=3", ["darts network", "C must be even"]),
        ("layers=0", ["darts network", "'layers' must be >= 3"]),
        ("C=100000", ["darts network", "parameters"]),
        ("dropout=0.1", ["does not accept option 'dropout'"]),
    ],
)
def test_darts_build_options(cli, tmp_path, option: str, needles: list[str]) -> None:
    text = (
        "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('skip_connect', 0), "
        "('sep_conv_3x3', 1), ('skip_connect', 0), ('sep_conv_3x3', 1), ('skip_connect', 0), "
        "('skip_connect', 2)], normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), "
        "('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 0), ('max_pool_3x3', 0), "
        "('skip_connect', 2), ('skip_connect', 2), ('avg_pool_3x3', 0)], reduce_concat=[2, 3, 4, 5])"
    )
    run = cli("export", text, "--space", "darts", "--build-option", option, "--out", tmp_path / "x")
    run.assert_one_line_error(*needles)


# --- JSON values: depth and size -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("[" * 100_000, "value of 100000 characters"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested {MAX_DEPTH + 1} levels deep"),
        ('{"a":' * 1000 + "1" + "}" * 1000, "nested 1000 levels deep"),
    ],
)
def test_deeply_nested_json_option(cli, tmp_path, value: str, needle: str) -> None:
    cli(*TOY, "--run-dir", tmp_path / "r", "-o", f"x={value}").assert_one_line_error("option 'x'", needle)


# --- a journal header whose recorded spec was mistyped ---------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("field", "value", "needles"),
    [
        ("strategy_options", [1, 2], ["strategy_options", "expects an object", "[1, 2]"]),
        ("strategy_options", "x", ["strategy_options", "expects an object"]),
        ("strategy_options", {"population_size": "x"}, ["option 'population_size' expects an integer"]),
        ("seed", "7", ["seed", "expects an integer, got '7'"]),
        ("budget", {"trials": "x"}, ["budget", "option 'trials' expects an integer or null"]),
        ("workers", 0, ["option 'workers' must be >= 1"]),
        ("surprise", 1, ["run spec does not accept option 'surprise'"]),
    ],
)
def test_resume_of_a_mistyped_header(cli, tmp_path, field: str, value: object, needles: list[str]) -> None:
    run_dir = tmp_path / "run"
    cli(*TOY, "--run-dir", run_dir, ok=True)
    path = journal_path(run_dir)
    header, *rest = path.read_text().splitlines()
    record = json.loads(header)
    record["spec"][field] = value
    path.write_text("\n".join([json.dumps(record), *rest]) + "\n")
    cli("resume", run_dir).assert_one_line_error(*needles)


# --- filesystem errors as they surface through the commands ---------------------------------
def test_run_dir_that_is_a_file(cli, tmp_path) -> None:
    (tmp_path / "taken").write_text("not a directory")
    cli(*TOY, "--run-dir", tmp_path / "taken").assert_one_line_error(str(tmp_path / "taken"))


def test_journal_that_is_a_directory(cli, tmp_path) -> None:
    journal_path(tmp_path / "run").mkdir(parents=True)
    cli(*TOY, "--run-dir", tmp_path / "run").assert_one_line_error(str(journal_path(tmp_path / "run")))
    cli("resume", tmp_path / "run").assert_one_line_error(str(journal_path(tmp_path / "run")))


def test_export_to_a_file(cli, tmp_path) -> None:
    (tmp_path / "out").write_text("a file")
    run = cli("export", NB201_CELL, "--space", "nb201", "--no-onnx", "--out", tmp_path / "out")
    run.assert_one_line_error(str(tmp_path / "out"))
    assert (tmp_path / "out").read_text() == "a file"


# --- the entry point's own handling (injected errors) -----------------------------------------
@pytest.fixture
def failing(monkeypatch):
    """Replace the CLI app with one whose only command raises the given exception."""

    def install(exc: BaseException) -> None:
        app = typer.Typer(pretty_exceptions_enable=False)

        @app.command()
        def boom() -> None:
            raise exc

        @app.command()
        def other() -> None:  # two commands, so `boom` stays a sub-command
            """Unused."""

        monkeypatch.setattr(nasforge.tools.cli, "app", app)

    return install


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "/runs/a/journal.jsonl"),
            "cannot write: No space left on device: /runs/a/journal.jsonl",
        ),
        (
            PermissionError(errno.EACCES, "Permission denied", "/ro/run"),
            "cannot access: Permission denied: /ro/run",
        ),
        (
            IsADirectoryError(errno.EISDIR, "Is a directory", "runs/a/journal.jsonl"),
            "cannot use a directory as a file: Is a directory: runs/a/journal.jsonl",
        ),
        (
            NotADirectoryError(errno.ENOTDIR, "Not a directory", "runs/file/journal.jsonl"),
            "cannot use a file as a directory: Not a directory: runs/file/journal.jsonl",
        ),
        (
            FileExistsError(errno.EEXIST, "File exists", "out"),
            "cannot create: File exists: out",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device"),  # a write to an open file: no name
            "cannot write: No space left on device",
        ),
        (MemoryError(), "input too large or too deeply nested: ran out of memory"),
        (
            RecursionError("maximum recursion depth exceeded"),
            "input too large or too deeply nested: ran out of recursion depth",
        ),
    ],
)
def test_environment_errors_are_one_line(cli, failing, exc: BaseException, line: str) -> None:
    failing(exc)
    run = cli("boom")
    run.assert_one_line_error(line)
    assert run.err.strip() == f"error: {line}"


def test_long_and_odd_paths_stay_on_one_short_line(cli, failing) -> None:
    name = "runs/" + "x" * 5000 + "\n/journal.jsonl"
    failing(OSError(errno.ENAMETOOLONG, "File name too long", name))
    run = cli("boom")
    run.assert_one_line_error("cannot use that name: File name too long: runs/xxx", "\\n/journal.jsonl")
    assert len(run.err) < 400


def test_messages_are_printed_literally_on_one_line(cli, failing) -> None:
    failing(NasforgeError("unknown op '[/]' in 'a\nb' [bold]x[/bold]"))
    run = cli("boom")
    run.assert_one_line_error("unknown op '[/]' in 'a\\nb' [bold]x[/bold]")


def test_a_bug_keeps_its_traceback(cli, failing) -> None:
    failing(RuntimeError("a bug in nasforge"))
    with pytest.raises(RuntimeError, match="a bug in nasforge"):
        cli("boom")


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["search", "--bogus"], ["No such option: --bogus", "usage: nasforge search [OPTIONS]"]),
        (["search", "--seed", "1.5"], ["Invalid value for '--seed'", "see 'nasforge search --help'"]),
        (["no-such-command"], ["No such command 'no-such-command'", "usage: nasforge [OPTIONS] COMMAND"]),
        (["export"], ["Missing argument", "usage: nasforge export [OPTIONS]"]),
    ],
)
def test_usage_errors_are_one_line_with_the_usage(cli, argv: list[str], needles: list[str]) -> None:
    cli(*argv).assert_one_line_error(*needles)


def test_help_and_no_arguments_still_print_help(cli) -> None:
    assert "Usage: nasforge search" in cli("search", "--help", ok=True).out
    bare = cli()
    assert bare.code == 2 and "Usage: nasforge" in bare.out and bare.err == ""

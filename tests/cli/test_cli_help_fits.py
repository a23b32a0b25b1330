"""Every command's ``--help`` reads in an 80-column terminal and speaks the user's words.

At ``COLUMNS=80`` no help cuts a word short ("…" is how the terminal renderer marks a
cut), no line is wider than the terminal, ``search --help`` stays under 120 lines with its
options in named panels and lists every flag it takes (executor plugins' included), and
its examples use only options it lists. No help text carries words a user cannot
resolve (issue numbers, note codes, paths outside the repository).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from nasforge.kernel.registry import get_registry
from nasforge.run.executors import flag_owners
from nasforge.tools.cli import app
from nasforge.tools.cli.plugin_commands import mount_plugin_commands
from nasforge.tools.cli.search_options import PANELS
from tests.cli_run import CliRun

WIDTH = 80
#: The most lines ``search --help`` may take at 80 columns.
SEARCH_HELP_LINES = 120
#: Words a user cannot resolve: the same pattern the documentation is checked with.
INTERNAL = re.compile(
    r"\b(issue [0-9]+|seed 00[0-4]|research note|note A[0-9]+|lent|lease)\b|\.\./shared", re.IGNORECASE
)
#: A flag as written in help text: ``--budget-trials``, ``-o``.
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b")

Cli = Callable[..., CliRun]


def _commands() -> list[str]:
    """Every command of the program, plugin commands included, and the program itself ("")."""
    mount_plugin_commands(app, get_registry())
    group = typer.main.get_command(app)
    return ["", *sorted(getattr(group, "commands", {}))]


def _help(cli: Cli, command: str) -> str:
    argv = [command, "--help"] if command else ["--help"]
    return cli(*argv, ok=True).out


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)


@pytest.mark.slow
def test_every_help_fits_80_columns_uncut_in_the_users_words(cli: Cli, narrow: None) -> None:
    commands = _commands()
    assert {"search", "resume", "score", "correlate", "export"} <= set(commands)
    problems = []
    for command in commands:
        text = _help(cli, command)
        name = command or "nasforge"
        assert "Usage:" in text, (name, text)
        for number, line in enumerate(text.splitlines(), 1):
            if "…" in line:
                problems.append(f"{name} --help line {number} is cut: {line.strip()}")
            if len(line.rstrip()) > WIDTH:
                problems.append(f"{name} --help line {number} is {len(line.rstrip())} wide")
            if INTERNAL.search(line):
                problems.append(f"{name} --help line {number} speaks internal words: {line.strip()}")
    assert problems == []


def test_search_help_is_short_grouped_and_complete(cli: Cli, narrow: None) -> None:
    text = _help(cli, "search")
    lines = text.splitlines()
    assert len(lines) < SEARCH_HELP_LINES, f"{len(lines)} lines"
    # the options sit in the named panels, in order, and no flat "Options" panel is left
    titles = [m.group(1) for m in re.finditer(r"╭─ (.+?) ─", text)]
    assert titles == list(PANELS), titles
    listed = set(FLAG.findall("\n".join(line for line in lines if line.startswith("│"))))
    for flag in ("--space", "--strategy", "--dataset", "--budget-trials", "--workers", "--json", "--help"):
        assert flag in listed, flag
    # every flag an executor plugin declares is listed (it works: it is rewritten to -x)
    declared = set(flag_owners(get_registry()))
    assert declared <= listed, declared - listed
    # the examples use only listed flags (the documented names, e.g. --dataset)
    examples = [line for line in lines if line.strip().startswith("nasforge search")]
    assert len(examples) >= 3, text
    used = set(FLAG.findall(" ".join(examples)))
    assert used and used <= listed, used - listed
    assert "--dataset" in used and "--benchmark-dataset" not in used


def test_an_executor_flag_in_help_is_still_the_executor_option(cli: Cli, tmp_path: Path) -> None:
    """Listing a flag does not make it an option of its own: it still reaches the executor
    (refused here by the in-process one, naming the executor that takes it)."""
    owners = flag_owners(get_registry())
    if not owners:
        pytest.skip("no executor plugin declares a flag")
    flag, (executor, _option) = sorted(owners.items())[0]
    run_dir = tmp_path / "run"
    argv = ["--space", "toy", "--evaluator", "toy", "--budget-trials", "1", "--run-dir", run_dir]
    cli("search", *argv, flag, "1").assert_one_line_error(flag, executor)
    assert not run_dir.exists()

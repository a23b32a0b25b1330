"""The command-line reference page is generated from the Typer app when the site is built:
it names every command (plugin commands included) and every visible option, and the
site's build script runs it without a GPU, a network or the docs extra."""

from __future__ import annotations

import importlib.util
import re

import pytest
import typer

from nasforge.kernel.registry import get_registry
from nasforge.tools.cli import app
from nasforge.tools.cli.plugin_commands import mount_plugin_commands
from tests.docs.pages import DOCS


def _generator():  # docs/ is not a package: load the script as the site build does
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_command_and_option_is_on_the_page() -> None:
    page = _generator().cli_reference()
    mount_plugin_commands(app, get_registry())
    group = typer.main.get_command(app)
    headings = re.findall(r"^### `nasforge ([a-z-]+)`$", page, flags=re.M)
    assert headings == [n for n, c in group.commands.items() if not c.hidden]  # type: ignore[attr-defined]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        section = page.split(f"### `nasforge {name}`", 1)[1].split("\n### ", 1)[0]
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert f"`{param.opts[0]}" in section, (name, param.opts)
    assert "`--ray-address VALUE`" in page  # an executor's own flag, read as --executor-option


def test_help_examples_become_code_blocks() -> None:
    md = _generator()._help_markdown(
        "Does a thing.\n\n    nasforge x --y 1\n    nasforge x --y 2\n\nThen more."
    )
    assert md == "Does a thing.\n\n```bash\nnasforge x --y 1\nnasforge x --y 2\n```\n\nThen more."


def test_table_cells_keep_their_pipes_inside() -> None:
    assert _generator()._cell("a | b\n  c") == "a &#124; b c"


def test_options_are_grouped_as_the_terminal_groups_them() -> None:
    class Option:
        param_type_name, hidden, opts, secondary_opts, is_flag, default = (
            "option",
            False,
            ["--a"],
            [],
            True,
            False,
        )
        multiple, envvar, required, help, rich_help_panel = False, None, False, "A.", "Budget and stopping"

    other = type("Other", (Option,), {"opts": ["--b"], "rich_help_panel": None, "help": "B."})
    table = _generator()._params_table([Option(), other()])
    assert table.index("**Budget and stopping**") < table.index("`--a`") < table.index("**Options**")
    assert table.index("**Options**") < table.index("`--b`") < table.index("`--help`")

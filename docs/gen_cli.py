"""The command-line reference as Markdown, read off the Typer app (plugin commands mounted).

Run by ``gen_pages.py`` at build time; ``python docs/gen_cli.py`` prints the page. Every
command, argument and option comes from the same objects ``nasforge --help`` prints, plus
the flags an executor plugin declares (rewritten to ``--executor-option`` before parsing,
so they are not options of the commands themselves).
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

HEADER = """# Command line

Every command below is `nasforge COMMAND [OPTIONS]`; `nasforge COMMAND --help` prints the
same text in the terminal. This page is generated from the command-line program itself
when the documentation is built, plugin commands included, so it always matches the
installed version. Commands that take `--json` print one object whose fields are listed
in [JSON output](../json-output.md).

Each option's help is one short line, so that `--help` reads in an 80-column terminal;
`search` groups its options as below (search, budget and stopping, data, execution,
output). What an option does at length is in the guide: the data a search trains on and
its file formats in [your own data](../getting-started/your-own-data.md), stop rules in
[stopping early](../guide/stopping.md), `--workers`, `--async`, `--executor` and
`--retries` in [scaling out](../guide/scaling.md), what `--export` writes for an ensemble
in [ensembles](../guide/ensembles.md), `--objective`, `--constraint` and `--plot` in
[objectives](../guide/objectives.md).

"""


def _value_name(param: Any) -> str:
    """The word shown after an option that takes a value (TEXT, INTEGER, PATH, ...)."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if typing.get_origin(annotation) in (list, tuple):
        annotation = (typing.get_args(annotation) or (str,))[0]
    if typing.get_origin(annotation) is typing.Union:
        annotation = next((a for a in typing.get_args(annotation) if a is not type(None)), str)
    names = {str: "TEXT", int: "INTEGER", float: "FLOAT", Path: "PATH", bool: ""}
    return names.get(annotation, "VALUE") if isinstance(annotation, type) else "VALUE"


def _cell(text: str) -> str:
    """Text that stays inside one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "&#124;")


def _option_row(param: Any) -> tuple[str, str]:
    names = list(param.opts)
    if getattr(param, "secondary_opts", None):
        names = [f"{a} / {b}" for a, b in zip(param.opts, param.secondary_opts, strict=False)] + names[1:]
    flag = getattr(param, "is_flag", False)
    value = "" if flag else _value_name(param)
    shown = ", ".join(f"`{n}{' ' + value if value else ''}`" for n in names)
    notes = []
    if getattr(param, "multiple", False) and "repeatable" not in (param.help or ""):
        notes.append("repeatable")
    default = getattr(param, "default", None)
    if default not in (None, False, (), []) and not (flag and default is False):
        notes.append(f"default: `{'yes' if default is True else default}`")
    envvar = getattr(param, "envvar", None)
    if envvar:
        notes.append(f"env: `{envvar if isinstance(envvar, str) else ', '.join(envvar)}`")
    if getattr(param, "required", False):
        notes.append("required")
    help_text = param.help or ""
    if notes:
        help_text += f" ({'; '.join(notes)})"
    return shown, _cell(help_text)


def _params_table(params: list[Any]) -> str:
    arguments = [p for p in params if getattr(p, "param_type_name", "") == "argument"]
    options = [p for p in params if getattr(p, "param_type_name", "") == "option" and not p.hidden]
    lines: list[str] = []
    if arguments:
        lines += ["| Argument | Description |", "|---|---|"]
        for p in arguments:
            metavar = (p.metavar or p.name or "").upper()
            help_text = getattr(p, "help", None) or ""
            lines.append(f"| `{metavar}` | {_cell(help_text + ('' if p.required else ' (optional)'))} |")
        lines.append("")
    panels: dict[str, list[Any]] = {}
    for p in options:  # grouped as the terminal groups them (rich help panels), in order
        panels.setdefault(getattr(p, "rich_help_panel", None) or "Options", []).append(p)
    for number, (panel, members) in enumerate(panels.items(), 1):
        if len(panels) > 1:
            lines += [f"**{panel}**", ""]
        lines += ["| Option | Description |", "|---|---|"]
        lines += [f"| {shown} | {text} |" for shown, text in map(_option_row, members)]
        if number == len(panels):
            lines.append("| `--help` | Show the command's help and exit. |")
        lines.append("")
    return "\n".join(lines)


def _usage(name: str, command: Any) -> str:
    pieces = ["nasforge", name, "[OPTIONS]"]
    for p in command.params:
        if getattr(p, "param_type_name", "") == "argument":
            metavar = (p.metavar or p.name or "").upper()
            pieces.append(metavar if p.required else f"[{metavar}]")
    return " ".join(pieces)


def _help_markdown(text: str) -> str:
    """A command's help as the terminal shows it, with its indented examples as code blocks."""
    paragraphs = [p for p in re.split(r"\n\s*\n", (text or "").replace("\b", "").strip("\n")) if p.strip()]
    out: list[str] = []
    for paragraph in paragraphs:
        lines = paragraph.splitlines()
        if all(line.startswith("    ") for line in lines):
            out.append("```bash\n" + "\n".join(line[4:] for line in lines) + "\n```")
        else:
            out.append(paragraph)
    return "\n\n".join(out)


def cli_reference() -> str:
    """The whole page."""
    import typer

    from nasforge.kernel.registry import get_registry
    from nasforge.run.executors import flag_owners
    from nasforge.tools.cli import app
    from nasforge.tools.cli.plugin_commands import mount_plugin_commands

    registry = get_registry()
    mount_plugin_commands(app, registry)
    group = typer.main.get_command(app)
    parts = [HEADER, "## Options before the command\n", _help_markdown(group.help or ""), ""]
    parts += ["`nasforge [OPTIONS] COMMAND ...`\n", _params_table(group.params)]
    parts.append("## Commands\n")
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        if command.hidden:
            continue
        parts += [f"### `nasforge {name}`\n", _help_markdown(command.help or ""), ""]
        parts += [f"`{_usage(name, command)}`\n", _params_table(command.params)]
    flags = flag_owners(registry)
    if flags:
        parts += [
            "## Flags added by executors\n",
            "An executor plugin may declare flags of its own. They are accepted by every command "
            "that takes `--executor-option` and are read as that option:\n",
            "| Flag | Executor | Same as |",
            "|---|---|---|",
        ]
        for flag, (executor, option) in sorted(flags.items()):
            parts.append(f"| `{flag} VALUE` | `{executor}` | `--executor-option {option}=VALUE` |")
        parts.append("")
    return "\n".join(parts)


if __name__ == "__main__":
    print(cli_reference())

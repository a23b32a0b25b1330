"""Console output shared by the commands: rich for people, JSON for programs.

Every ``--json`` document is a JSON object whose ``schema`` field names the command and
the version of its fields, ``"nasforge.<command>/<version>"`` (``docs/json-output.md``
lists each command's fields). Within a version fields may be added; renaming or removing
one, or changing what it means, bumps the command's version, so a program can refuse a
document it was not written for instead of misreading it. A listing's rows are under
``items``.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console

#: Progress bars and human messages go to stderr so stdout stays clean for --json.
err_console = Console(stderr=True)
out_console = Console()

#: The field of every --json document that names its schema.
SCHEMA_FIELD = "schema"
#: The version of a command's JSON fields unless the command says otherwise.
SCHEMA_VERSION = 1


def schema_name(command: str, version: int = SCHEMA_VERSION) -> str:
    """``"nasforge.<command>/<version>"``, e.g. ``"nasforge.search/1"``."""
    return f"nasforge.{command}/{version}"


def json_document(data: Any, *, command: str | None = None, version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """``data`` as the document a command prints: an object (a list becomes its ``items``)
    with the schema field. ``command`` defaults to the running command's name (a
    plugin command's too), so a command only says it when it writes JSON elsewhere."""
    name = command or _running_command()
    if isinstance(data, Mapping):
        if SCHEMA_FIELD in data:
            raise ValueError(f"a --json document of '{name}' has its own '{SCHEMA_FIELD}' field")
        return {SCHEMA_FIELD: schema_name(name, version), **data}
    if isinstance(data, list | tuple):
        return {SCHEMA_FIELD: schema_name(name, version), "items": list(data)}
    raise TypeError(f"a --json document is an object or a list, not {type(data).__name__}")


def print_json(data: Any, *, command: str | None = None, version: int = SCHEMA_VERSION) -> None:
    """Print :func:`json_document` of ``data`` to stdout (keys sorted, indented)."""
    document = json_document(data, command=command, version=version)
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")


class _Invocation:
    """The command this invocation runs, as the CLI's top-level callback saw it."""

    command: str | None = None


def set_running_command(name: str | None) -> None:
    """Record the command being run (the CLI's callback; None when the invocation ends)."""
    _Invocation.command = name


def _running_command() -> str:
    """The command's name from Click's context (also a command that another Typer app runs,
    as tests and embedders do), else as ``nasforge``'s callback recorded it."""
    name = _click_command() or _Invocation.command
    if not name:
        raise ValueError("print_json outside a nasforge command needs command= (the schema names it)")
    return name


def _click_command() -> str | None:
    # Typer >= 0.2x vendors Click as typer._click; older releases use click itself
    for module in ("typer._click.globals", "click.globals"):
        try:
            found = importlib.import_module(module).get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if found is not None and found.info_name:
            return str(found.info_name)
    return None


def first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""

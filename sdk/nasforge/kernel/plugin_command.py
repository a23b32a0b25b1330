"""A command a plugin adds to the ``nasforge`` CLI (the core has none for any plugin).

A plugin returns these from ``nasforge_register_commands``; the CLI mounts each under
its name, so uninstalling the plugin removes the command. ``callback`` is a plain
function whose parameters are declared the Typer way (``Annotated[..., typer.Option()]``);
it should raise :class:`nasforge.NasforgeError` for bad input, which the CLI prints as
one line with exit status 2. Everything the command does should also be reachable from
Python, so the callback is best a thin layer over the plugin's own API.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs

_NAME = re.compile(r"[a-z][a-z0-9-]*")


def _command_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(f"command name {value!r} must be lower-case letters, digits and '-'")


@attrs.frozen
class PluginCommand:
    """``nasforge NAME ...`` runs ``callback``; ``help`` overrides its docstring's summary."""

    name: str = attrs.field(validator=_command_name)
    callback: Callable[..., Any] = attrs.field(validator=attrs.validators.is_callable())
    help: str | None = None

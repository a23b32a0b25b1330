"""An executor's own flags on the command line, read as the generic ``--executor-option``.

The commands that run trials or sweeps take ``--executor-option KEY=VALUE`` for whatever
options the chosen executor has; an executor plugin may also declare flags for them
(``Executor.flags``: the Ray plugin's flag for a cluster's address is
``--executor-option address=HOST:PORT``), so the core names no engine's options. The
flags are rewritten before the command line is parsed, wherever they stand among the
command's arguments; a flag used with another executor is refused by that executor's
option check, in one line naming the executor that takes it. Each command's ``--help``
lists the flags of the installed executors beside ``--executor-option`` (:class:`FlagListingGroup`).
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any, Protocol

import typer
from typer.core import TyperGroup

from nasforge.run.executors import flag_owners

#: The generic option every command that runs trials or sweeps takes.
OPTION = "--executor-option"
#: The global options (before the command) that take a value.
_GLOBAL_VALUES = frozenset({"--threads", "--log-level"})


class Components(Protocol):
    """What these helpers read of a registry: its components of a kind, by name (the
    :class:`~nasforge.kernel.registry.Registry`, or the command line's catalog while it parses first)."""

    def items(self, kind: str) -> list[tuple[str, Any]]: ...


def expand_executor_flags(argv: list[str], registry: Components, commands: Collection[str]) -> list[str]:
    """``argv`` with every declared executor flag as ``--executor-option NAME=VALUE``, for
    the ``commands`` that take that option (the others would not know it either)."""
    flags = {flag: option for flag, (_, option) in flag_owners(registry).items()}
    at = _command_at(argv)
    if not flags or at is None or argv[at] not in commands:
        return argv
    out, rest = argv[: at + 1], argv[at + 1 :]
    i = 0
    while i < len(rest):
        token = rest[i]
        if token == "--":  # what follows is arguments, not options
            out += rest[i:]
            break
        flag, eq, value = token.partition("=")
        if flag in flags and (eq or i + 1 < len(rest)):
            if not eq:
                i += 1
                value = rest[i]
            out += [OPTION, f"{flags[flag]}={value}"]
        else:
            out.append(token)
        i += 1
    return out


def _command_at(argv: list[str]) -> int | None:
    """Where the command's name stands (after the global options), if anywhere."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("-"):
            return i
        if token in _GLOBAL_VALUES:
            i += 1
        i += 1
    return None


def commands_taking_executor_options(app: typer.Typer | Any) -> set[str]:
    """The names of ``app``'s commands (plugins' included) that take ``--executor-option``;
    ``app`` is a Typer application or the Click group made of one."""
    group = typer.main.get_command(app) if isinstance(app, typer.Typer) else app
    commands = getattr(group, "commands", {})
    return {name for name, command in commands.items() if any(OPTION in p.opts for p in command.params)}


class _Command(Protocol):
    """What these helpers use of a Click command (Typer vendors Click in recent releases,
    so the class to name depends on the installed Typer)."""

    params: list[Any]

    def get_help_option(self, ctx: Any) -> Any: ...


def list_executor_flags(command: _Command, registry: Components) -> None:
    """Show the executor flags ``registry`` declares in ``command``'s help, right after its
    ``--executor-option`` and in its panel: ``--NAME-KEY VALUE  -x KEY=VALUE (NAME)`` for executor NAME.

    They are never parsed as options of their own (:func:`expand_executor_flags` rewrites
    them first), so each only takes a value and drops it; a flag at the end of the command
    line with no value is a usage error, as any option's would be.
    """
    at = next((i for i, p in enumerate(command.params) if OPTION in getattr(p, "opts", ())), None)
    if at is None:
        return
    generic = command.params[at]
    present = {opt for p in command.params for opt in getattr(p, "opts", ())}
    listed: list[Any] = []
    for flag, (executor, option) in sorted(flag_owners(registry).items()):
        if flag in present:
            continue
        shown = copy.copy(generic)  # a Typer option as Typer renders it, in the same panel
        shown.name = f"executor flag {flag}"
        shown.opts, shown.secondary_opts = [flag], []
        shown.multiple, shown.default, shown.expose_value = False, None, False
        shown.metavar = "VALUE"
        shown.help = f"-x {option}=VALUE ({executor})."
        listed.append(shown)
    command.params[at + 1 : at + 1] = listed


def help_in_last_panel(command: _Command, ctx: Any) -> None:
    """Where every option of ``command`` sits in a named help panel, ``--help`` joins the
    last one rather than standing alone in a panel of its own (three lines saved)."""
    options = [p for p in command.params if getattr(p, "param_type_name", None) == "option"]
    panels = [getattr(p, "rich_help_panel", None) for p in options]
    if panels and all(panels):
        help_option = command.get_help_option(ctx)
        if help_option is not None:
            help_option.rich_help_panel = panels[-1]


def untyped_flags(command: _Command, ctx: Any) -> None:
    """Flags that take no value show none in ``--help`` (Typer labels them ``<bool>``, which
    reads as if ``--json`` wanted an argument)."""
    for param in [*command.params, command.get_help_option(ctx)]:
        if param is not None and getattr(param, "is_flag", False) and getattr(param, "metavar", "") is None:
            param.metavar = ""


class FlagListingGroup(TyperGroup):
    """The ``nasforge`` group: each command it hands out lists the installed executors'
    flags in its help (the registry is the context's object, as :func:`nasforge.tools.cli.main`
    passes it), and its ``--help`` in its last panel where it has panels; flags show no type."""

    def get_params(self, ctx: Any) -> list[Any]:
        untyped_flags(self, ctx)
        return list(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            return None
        registry = ctx.find_root().obj  # the registry, or the catalog while parsing first
        if registry is not None and hasattr(registry, "items"):
            list_executor_flags(command, registry)
        help_in_last_panel(command, ctx)
        untyped_flags(command, ctx)
        return command

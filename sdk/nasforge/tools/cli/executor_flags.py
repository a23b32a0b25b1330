"""An executor's own flags on the command line, read as the generic ``--executor-option``.

The commands that run trials or sweeps take ``--executor-option KEY=VALUE`` for whatever
options the chosen executor has; an executor plugin may also declare flags for them
(``Executor.flags``: the Ray plugin's flag for a cluster's address is
``--executor-option address=HOST:PORT``), so the core names no engine's options. The
flags are rewritten before the command line is parsed, wherever they stand among the
command's arguments; a flag used with another executor is refused by that executor's
option check, in one line naming the executor that takes it.
"""

from __future__ import annotations

from collections.abc import Collection

import typer

from nasforge.kernel.registry import Registry
from nasforge.run.executors import flag_owners

#: The generic option every command that runs trials or sweeps takes.
OPTION = "--executor-option"
#: The global options (before the command) that take a value.
_GLOBAL_VALUES = frozenset({"--threads", "--log-level"})


def expand_executor_flags(argv: list[str], registry: Registry, commands: Collection[str]) -> list[str]:
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


def commands_taking_executor_options(app: typer.Typer) -> set[str]:
    """The names of ``app``'s commands (plugins' included) that take ``--executor-option``."""
    group = typer.main.get_command(app)
    commands = getattr(group, "commands", {})
    return {name for name, command in commands.items() if any(OPTION in p.opts for p in command.params)}

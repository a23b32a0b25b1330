"""What several commands share, declared once so they read the same: their options, and
the registry of the invocation.

``nasforge``'s entry point makes one registry per invocation and hands it to every
command through Typer's context (``ctx.obj``); a command, a plugin's included, gets it
with :func:`command_registry` rather than fetching the process-wide one, so the commands
of one invocation all see the same plugins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nasforge.kernel.registry import Registry, get_registry
from nasforge.tools.cli import log_output


def quiet_logs(value: bool) -> bool:
    """A command's ``--quiet`` also keeps its status messages to warnings and errors."""
    if value:
        log_output.quieten()
    return value


Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bar; warnings only.", callback=quiet_logs)
]
Device = Annotated[str, typer.Option(help="cpu or cuda.")]
BuildOptions = Annotated[
    list[str] | None, typer.Option("--build-option", help="Network option key=value, e.g. C=8.")
]
CacheDir = Annotated[
    Path | None, typer.Option(help="Score cache directory (default: ~/.cache/nasforge/scores).")
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the score cache.")]


def command_registry(ctx: typer.Context | None) -> Registry:
    """The registry this invocation's entry point made (``ctx.obj``); the process-wide
    default when the command runs outside ``nasforge.tools.cli.main`` (e.g. Typer's test runner)."""
    obj = ctx.obj if ctx is not None else None
    return obj if isinstance(obj, Registry) else get_registry()


#: Where a metric sweep's networks are built and scored (``nasforge.tools.scoring.parallel``).
SweepExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where networks are built and scored: inprocess, process (a local process pool) "
        "or a registered executor such as ray (a local Ray instance, or a cluster named by its "
        "--executor-option). Scores are the same.",
    ),
]
SweepWorkers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Worker processes (process) or CPUs of a local Ray instance (ray), one torch "
        "thread each (default: the CPUs this process may use).",
    ),
]
ExecutorOptionList = Annotated[
    list[str] | None,
    typer.Option(
        "--executor-option",
        "-x",
        help="An option of the executor's own, KEY=VALUE, e.g. address=HOST:PORT to join a cluster "
        "(repeatable); executors also take their own flags for them (`nasforge executors` lists both). "
        "Where trials run is not part of the run: a run may resume elsewhere.",
    ),
]

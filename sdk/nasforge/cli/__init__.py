"""The ``nasforge`` command line (Typer). Every command also exists as a Python call."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from nasforge.cli import export_cmd, listing, score_cmd, search_cmd
from nasforge.cli.output import err_console
from nasforge.cli.plugin_commands import mount_plugin_commands
from nasforge.errors import NasforgeError
from nasforge.registry import get_registry

app = typer.Typer(
    name="nasforge",
    help="Neural architecture search from the command line: list plugins, search, resume, export.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="markdown",
)
app.command()(listing.plugins)
app.command("spaces")(listing.spaces)
app.command("metrics")(listing.metrics)
app.command("strategies")(listing.strategies)
app.command("evaluators")(listing.evaluators)
app.command("datasets")(listing.datasets)
app.command()(search_cmd.search)
app.command()(search_cmd.resume)
app.command()(export_cmd.export)
app.command()(export_cmd.inspect)
app.command()(score_cmd.score)
app.command()(score_cmd.correlate)


@app.callback()
def _global_options(
    threads: Annotated[
        int | None,
        typer.Option(
            min=1,
            envvar="NASFORGE_THREADS",
            help="torch CPU threads. On a busy or 2-core machine 1 is often several times faster.",
        ),
    ] = None,
) -> None:
    """Neural architecture search from the command line: list plugins, search, resume, export."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors print one line and exit with status 2."""
    try:
        mount_plugin_commands(app, get_registry())
        app(args=argv, prog_name="nasforge")
    except NasforgeError as exc:
        err_console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)

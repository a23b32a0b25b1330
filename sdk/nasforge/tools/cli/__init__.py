"""The ``nasforge`` command line (Typer). Every command also exists as a Python call.

It answers at once where it can: the command line is first parsed against the core's
commands and the plugins' commands and executor flags as their entry points declare them
(:mod:`~nasforge.tools.cli.plugin_catalog`), so ``--help``, ``--version`` and a usage
error end before torch or any plugin's components load; only a command that runs builds
the registry. Names of components (``--space nb210``) are checked by the command, first,
before any data is read or network built.
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.registry import get_registry
from nasforge.run.advice import cli_message
from nasforge.tools.cli import export_cmd, listing, log_output, report_cmd, score_cmd, search_cmd, train_cmd
from nasforge.tools.cli.error_lines import one_line, os_error_line, resource_error_line, usage_error_line
from nasforge.tools.cli.executor_flags import (
    FlagListingGroup,
    commands_taking_executor_options,
    expand_executor_flags,
)
from nasforge.tools.cli.output import err_console, out_console, set_running_command
from nasforge.tools.cli.plugin_catalog import load_catalog
from nasforge.tools.cli.plugin_commands import mount_plugin_commands, plugin_click_command

app = typer.Typer(
    name="nasforge",
    cls=FlagListingGroup,
    help="Neural architecture search from the command line: list plugins, search, resume, train, export.",
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
app.command("executors")(listing.executors)
app.command()(search_cmd.search)
app.command()(search_cmd.resume)
app.command()(train_cmd.train)
app.command()(export_cmd.export)
app.command()(export_cmd.inspect)
app.command()(score_cmd.score)
app.command()(score_cmd.correlate)
app.command()(report_cmd.report)


def _print_version(value: bool) -> None:
    if value:
        from nasforge import __version__

        out_console.print(f"nasforge {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    threads: Annotated[
        int | None,
        typer.Option(
            min=1,
            envvar="NASFORGE_THREADS",
            help="torch CPU threads (default: 1 on up to 2 CPUs, else half of them).",
        ),
    ] = None,
    log_level: Annotated[
        str | None,
        typer.Option(
            envvar=log_output.LEVEL_ENV,
            help="Status messages on stderr from this level up: debug, info (default), warning, error.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug messages too.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Warnings and errors only.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Neural architecture search from the command line: list plugins, search, resume, train, export."""
    level = log_output.parse_level(log_level) if log_level is not None else logging.INFO
    if verbose:
        level = logging.DEBUG
    if quiet:
        level = logging.WARNING
    log_output.set_level(level)
    set_running_command(ctx.invoked_subcommand)  # what a --json document's schema names
    import torch  # here: a command runs (help and usage errors ended before torch)

    from nasforge.run.threads import default_threads

    torch.set_num_threads(threads if threads is not None else default_threads())


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: bad input prints one line on stderr and exits with status 2.

    Bad input is a :class:`NasforgeError`, a usage error (unknown option, bad value: the
    line carries the command's usage), a filesystem error (a run dir that is a file, a
    read-only or full disk) or an input that exhausts memory or the stack. Any other
    exception is a bug in nasforge or a plugin and keeps its traceback.
    """
    log_output.install()  # status messages to stderr; the options before the command set the level
    try:
        _run(argv)
    finally:
        log_output.uninstall()  # an in-process caller (tests, the fuzz harness) gets its logging back
        set_running_command(None)


def _run(argv: list[str] | None) -> NoReturn:
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        _parse_first(given)  # --help, --version and usage errors end here, before torch loads
        # one registry per invocation, made here and handed to every command (ctx.obj)
        registry = get_registry()
        mount_plugin_commands(app, registry)
        argv = expand_executor_flags(given, registry, commands_taking_executor_options(app))
        # not standalone: Click would print a usage error as a multi-line box and exit
        status = app(args=argv, prog_name="nasforge", standalone_mode=False, obj=registry)
    except typer.TyperException as exc:  # Click's usage errors (Typer vendors Click)
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is already printed
            sys.exit(exc.exit_code)
        _fail(usage_error_line(exc), status=exc.exit_code)
    except typer.Exit as exc:  # --help or --version, printed while parsing first
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(1)
    except NasforgeError as exc:
        _fail(cli_message(exc))  # the same refusal, its advice in the command line's words
    except OSError as exc:
        _fail(os_error_line(exc))
    except (MemoryError, RecursionError) as exc:
        _fail(resource_error_line(exc))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        sys.exit(130)
    # as Click's standalone mode did: always leave through SystemExit (typer.Exit(n), Ctrl-C: n)
    sys.exit(status if isinstance(status, int) else 0)


def _parse_first(argv: list[str]) -> None:
    """Parse ``argv`` as the command line will, without running anything or building the
    registry: the core's commands plus the plugins' as :func:`load_catalog` finds them.

    Help and ``--version`` print here and raise :class:`typer.Exit`; bad input (a
    misspelt command among them) raises Click's usage error. The registry, built after,
    still decides which plugin commands run: one of a plugin that fails to load is gone.
    """
    catalog = load_catalog()
    group = typer.main.get_command(app)
    commands = getattr(group, "commands", {})
    for name, command in catalog.items("command"):
        if name not in commands:
            group.add_command(plugin_click_command(name, command), name)  # type: ignore[attr-defined]
    argv = expand_executor_flags(argv, catalog, commands_taking_executor_options(group))
    with group.make_context("nasforge", list(argv), obj=catalog) as ctx:
        rest = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        if not rest:
            return
        name, command, args = group.resolve_command(ctx, rest)  # type: ignore[attr-defined]
        if command is not None:
            command.make_context(name, args, parent=ctx)


def _fail(message: str, *, status: int = 2) -> NoReturn:
    """One line (markup in the message printed as text, never parsed) and exit ``status``."""
    err_console.print(f"[red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True)
    sys.exit(status)

"""`nasforge report RUN_DIR --out report.html`: one static page of a run."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from nasforge.tools.cli.common_options import command_registry

log = logging.getLogger("nasforge.report")


def report(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="The run directory (it holds journal.jsonl).")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The page to write (.html); replaced atomically.")
    ] = Path("report.html"),
    space: Annotated[
        str | None,
        typer.Option(
            help="The run's space from this code (PATH.py:NAME or package.module:NAME), made with "
            "the run's space options, where the file the run recorded has moved or is not here; "
            "the genotypes are written as it writes them (default: what the run recorded)."
        ),
    ] = None,
) -> None:
    """Write one static HTML page of a run: the anytime curve, the Pareto front (several
    objectives), the best cell drawn as a graph and a sortable table of every trial.

    No server and nothing fetched: the figures are embedded, the table sorts in the
    browser. Needs matplotlib (`pip install 'nasforge[plot]'`).
    """
    from nasforge.tools.report import check_out_path, write_report

    check_out_path(out)  # a bad path is one line before the journal is read
    view = write_report(run_dir, out, registry=command_registry(ctx), space=space)
    what = f"{len(view.rows)} trials" + (f", stopped: {view.stopped.get('reason')}" if view.stopped else "")
    log.info("report of %s (%s) written to %s", run_dir, what, out)

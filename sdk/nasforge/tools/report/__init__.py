"""``nasforge report``: one static HTML page of a finished (or unfinished) ask/tell run.

The page shows the anytime curve, the Pareto front of a multi-objective run, a drawing
of the best cell as a graph (where the space exposes its cells through the supernet
contract), and a sortable table of every trial. It is written atomically, so a report
that a browser or a CI artifact upload picks up is never half written.
"""

from __future__ import annotations

import os
from pathlib import Path

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.registry import Registry, get_registry
from nasforge.tools.report import figures
from nasforge.tools.report.page import Figure, render
from nasforge.tools.report.run_view import RunView, read_run

__all__ = ["RunView", "read_run", "write_report"]


def check_out_path(out: str | os.PathLike[str]) -> Path:
    """The page's path, refused in one line before any work when it cannot be one."""
    path = Path(out)
    if path.is_dir():
        raise NasforgeError(
            f"cannot write the report {path}: it is a directory (give a file, e.g. report.html)"
        )
    if path.suffix.lower() not in (".html", ".htm"):
        raise NasforgeError(f"the report is an HTML page: give a path ending in .html, not '{path.name}'")
    return path


def write_report(
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    space: str | None = None,
) -> RunView:
    """Write the report of the run in ``run_dir`` to ``out`` (an .html file); returns what
    it showed. ``space`` (``PATH.py:NAME`` or ``package.module:NAME``) is the run's space
    where the file it recorded has moved: made with the run's space options, it writes the
    genotypes."""
    path = check_out_path(out)
    registry = registry if registry is not None else get_registry()
    view = read_run(run_dir, registry, space=space)
    if not view.rows:
        raise NasforgeError(f"the run in {view.run_dir} has no trials yet: nothing to report")
    shown: list[Figure] = [
        Figure(
            "Anytime curve",
            figures.anytime_png(view),
            caption=(
                "Best so far of each objective among feasible trials (line) and every trial (dots)."
                + (
                    f" Only full-budget trials count as the best; the right panel is against the "
                    f"{view.fidelity} spent."
                    if view.multi_fidelity
                    else ""
                )
            ),
        )
    ]
    if figures.curves_of(view):
        shown.append(
            Figure(
                "Learning curves",
                figures.curves_png(view),
                caption=(
                    f"Each trial's {view.goal.objectives[0].name} after every epoch, coloured by the "
                    "budget it was given; a cross marks a trial stopped early."
                ),
            )
        )
    if view.goal.multi_objective:
        shown.append(
            Figure(
                "Pareto front",
                figures.front_png(view),
                caption=f"{len(view.front)} non-dominated of {len(view.rows)} trials.",
            )
        )
    cells = figures.cells_of(view)
    if isinstance(cells, str):
        shown.append(Figure("Best cell", None, missing=cells))
    else:
        assert view.chosen is not None
        text = view.chosen_text
        where = (
            f"trial {view.best.index}" if view.best is not None and view.best.genotype == view.chosen else ""
        )
        short = text if len(text) <= 110 else text[:107] + "..."
        title = f"chosen ({where}): {short}" if where else f"chosen: {short}"
        shown.append(Figure("Best cell", figures.cell_png(cells, title)))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, render(view, shown))
    except OSError as exc:
        raise NasforgeError(f"cannot write the report {path}: {exc.strerror or exc}") from exc
    return view

"""The picture of a multi-objective run: its Pareto front over everything it evaluated.

A front is read at a glance and hardly at all as a table of numbers, so a
multi-objective ``nasforge search`` draws one (matplotlib, the optional ``plot`` extra,
imported only here and only when a plot is asked for). Plain data in, a file out: the
command passes its trials and front, a benchmark may add reference fronts (the
tabular benchmark's true front), and nothing here knows any plugin.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.result import Trial
from nasforge.tools import plot_files


@attrs.frozen
class Series:
    """Extra points to draw: a label, (x, y) pairs in the plot's two objectives, a style."""

    label: str
    points: tuple[tuple[float, float], ...] = attrs.field(converter=lambda v: tuple(map(tuple, v)))
    #: drawn as a step line through the points (a front), else as dots
    front: bool = True
    color: str = "black"


def plot_format(path: str | os.PathLike[str]) -> str:
    """:func:`nasforge.tools.plot_files.plot_format` for this plot (its name in the message)."""
    return plot_files.plot_format(path, feature="Pareto front plots")


def _label(goal: SearchGoal, k: int) -> str:
    objective = goal.objectives[k]
    return f"{objective.name} ({'higher' if objective.higher_is_better else 'lower'} is better)"


def _xy(goal: SearchGoal, trial: Trial) -> tuple[float, float]:
    values = trial.result.objectives
    return (
        float(values.get(goal.objectives[0].name, math.nan)),
        float(values.get(goal.objectives[1].name, math.nan)),
    )


def plot_front(
    trials: Sequence[Trial],
    front: Sequence[Trial],
    goal: SearchGoal,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    label: str | None = None,
    extra: Sequence[Series] = (),
) -> Path:
    """Every evaluated trial (feasible as dots, infeasible as crosses), the front as a
    step line through its members, and any ``extra`` series, over the goal's first two
    objectives; ``label`` names the run in the legend. Returns the path; the file appears
    only when complete."""
    prefix = f"{label}: " if label else ""
    if len(goal.objectives) < 2:
        raise NasforgeError("a Pareto front plot needs two objectives")
    out = Path(path)
    image_format = plot_format(out)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    try:
        feasible = [_xy(goal, t) for t in trials if goal.feasible(t.result)]
        infeasible = [_xy(goal, t) for t in trials if not goal.feasible(t.result) and not t.result.failed]
        for series in extra:  # backgrounds (e.g. every cell of a table) go under the run's trials
            if not series.front:
                _draw(ax, goal, series)
        if feasible:
            xs, ys = zip(*feasible, strict=True)
            ax.scatter(xs, ys, s=10, color="0.65", label=f"{prefix}evaluated ({len(feasible)})")
        if infeasible:
            xs, ys = zip(*infeasible, strict=True)
            ax.scatter(
                xs,
                ys,
                s=12,
                marker="x",
                color="0.8",
                label=f"{prefix}infeasible ({len(infeasible)})",
            )
        for series in extra:
            if series.front:
                _draw(ax, goal, series)
        members = [_xy(goal, t) for t in front]
        if members:
            _draw(ax, goal, Series(f"{prefix}front ({len(members)})", members, front=True, color="tab:red"))
        ax.set_xlabel(_label(goal, 0))
        ax.set_ylabel(_label(goal, 1))
        shown = f" (first two of {len(goal.objectives)} objectives)" if len(goal.objectives) > 2 else ""
        ax.set_title((title or f"Pareto front: {len(front)} of {len(trials)} trials") + shown, fontsize=10)
        if goal.constraints:
            ax.text(
                0.01,
                0.01,
                "subject to " + ", ".join(goal.constraint_texts()),
                transform=ax.transAxes,
                fontsize=8,
                color="0.3",
            )
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        plot_files.save_figure(fig, out, image_format)
    finally:
        plt.close(fig)
    return out


def _draw(ax: object, goal: SearchGoal, series: Series) -> None:
    points = sorted(series.points)
    if not points:
        return
    xs, ys = zip(*points, strict=True)
    if series.front:
        # a front is a staircase (the edge of what it dominates): between two members the
        # edge runs at the height of the one better in x, the next one when x is maximised
        where = "pre" if goal.objectives[0].higher_is_better else "post"
        ax.step(xs, ys, where=where, color=series.color, linewidth=1, alpha=0.8)  # type: ignore[attr-defined]
        ax.scatter(xs, ys, s=22, color=series.color, label=series.label, zorder=3)  # type: ignore[attr-defined]
    else:
        ax.scatter(xs, ys, s=6, color=series.color, label=series.label, alpha=0.5)  # type: ignore[attr-defined]

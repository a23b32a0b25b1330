"""The report's pictures as PNG bytes: the anytime curve, the Pareto front, the best cell.

PNG bytes rather than files, because the page embeds them as data URIs (one file to
mail or archive, nothing to fetch). matplotlib (the ``plot`` extra) is imported only
here, only when a report is written. The cell drawing reads the space's cells through
the core's supernet contract (:class:`~nasforge.kernel.supernet_topology.CellTopology` and
``kept_edges``), so any space that implements it gets one, named by nothing here.
"""

from __future__ import annotations

import io
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nasforge.kernel.optional import require
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SUPERNET
from nasforge.kernel.supernet import as_supernet
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge
from nasforge.tools.pareto_plot import plot_front
from nasforge.tools.report.run_view import RunView, value


def _pyplot() -> Any:
    require("matplotlib", extra="plot", feature="run reports")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def _best_so_far(values: Sequence[float], higher: bool) -> list[float]:
    out: list[float] = []
    best = math.nan
    for v in values:
        if math.isfinite(v) and (math.isnan(best) or (v > best if higher else v < best)):
            best = v
        out.append(best)
    return out


def _budget_colours(plt: Any, n: int) -> list[Any]:
    """One colour per budget, smallest first: dark to warm, none as pale as a white page."""
    cmap = plt.get_cmap("plasma")
    return [cmap(0.8 * k / max(1, n - 1)) for k in range(n)]


def _clock_axis(view: RunView) -> tuple[list[float], str]:
    """The anytime curve's second x axis: the budget spent (a multi-fidelity run: what it
    saves is epochs, not seconds), else the run's clock."""
    xs: list[float] = []
    spent = 0.0
    for t in view.trials:
        if view.multi_fidelity:
            spent += float(view.spent_of(t) or 0)
        else:
            spent += t.result.cost if view.clock == "simulated" else t.wall_seconds
        xs.append(spent)
    if view.multi_fidelity:
        return xs, f"{view.fidelity} spent (cumulative)"
    return xs, f"{view.clock} seconds (cumulative)"


def anytime_png(view: RunView) -> bytes:
    """Best-so-far of each objective (feasible trials only; in a multi-fidelity run, full
    evaluations only) against the trial count and against the run's clock (a tabular
    benchmark's simulated seconds, wall seconds, or the budget a multi-fidelity run
    spent); every trial's own value as dots beneath (coloured by budget where it varies)."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    goal, trials = view.goal, view.trials
    objectives = goal.objectives
    clock, clock_label = _clock_axis(view)
    budgets = sorted({b for b in (view.budget_of(t) for t in trials) if b is not None})
    colours = _budget_colours(plt, len(budgets))
    fig, axes = plt.subplots(len(objectives), 2, figsize=(10, 3.2 * len(objectives)), squeeze=False)
    try:
        for row, objective in enumerate(objectives):
            own = [value(t, objective.name) if goal.feasible(t.result) else math.nan for t in trials]
            counted = [v if view.at_full(t) else math.nan for v, t in zip(own, trials, strict=True)]
            best = _best_so_far(counted, objective.higher_is_better)
            direction = "higher" if objective.higher_is_better else "lower"
            steps: list[float] = list(range(1, len(trials) + 1))
            for col, (xs, xlabel) in enumerate(((steps, f"{view.unit}s"), (clock, clock_label))):
                ax = axes[row][col]
                if view.multi_fidelity and len(budgets) > 1:
                    for k, b in enumerate(budgets):
                        pick = [i for i, t in enumerate(trials) if view.budget_of(t) == b]
                        ax.scatter(
                            [xs[i] for i in pick],
                            [own[i] for i in pick],
                            s=10,
                            color=colours[k],
                            label=f"{view.fidelity}={b}",
                        )
                else:
                    ax.scatter(xs, own, s=8, color="0.7", label="trial")
                label = "best so far (full budget)" if view.multi_fidelity else "best so far"
                ax.step(
                    xs,
                    best,
                    where="post",
                    color="tab:red" if view.multi_fidelity else "tab:blue",
                    linewidth=1.6,
                    label=label,
                )
                ax.set_xlabel(xlabel)
                ax.set_ylabel(f"{objective.name} ({direction} is better)", fontsize=9)
                ax.grid(alpha=0.3)
                if col == 0:
                    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                elif not view.multi_fidelity and view.clock == "simulated" and clock and clock[-1] > 0:
                    ax.set_xscale("log")
            axes[row][0].legend(fontsize=8, loc="best")
        fig.suptitle(f"Anytime curve: {len(trials)} {view.unit}s", fontsize=11)
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)


def curves_of(view: RunView) -> list[tuple[Trial, list[float]]]:
    """(trial, its per-epoch values of the first objective) of every trial that reported
    a learning curve (an evaluator that trains does: ``metadata["per_epoch"]``)."""
    name = view.goal.objectives[0].name
    out = []
    for t in view.trials:
        per_epoch = t.result.metadata.get("per_epoch")
        curve = per_epoch.get(name) if isinstance(per_epoch, dict) else None
        if isinstance(curve, list) and curve and all(isinstance(v, int | float) for v in curve):
            out.append((t, [float(v) for v in curve]))
    return out


def curves_png(view: RunView) -> bytes:
    """Every trial's learning curve (its objective after each epoch), coloured by the
    budget it was given; a trial stopped early ends in a cross, the best is drawn bold.
    Where a multi-fidelity run spent its budget, and what its short trainings showed."""
    plt = _pyplot()
    curves = curves_of(view)
    objective = view.goal.objectives[0]
    budgets = sorted({len(c) if (b := view.budget_of(t)) is None else b for t, c in curves})
    colours = _budget_colours(plt, len(budgets))
    fig, ax = plt.subplots(figsize=(10, 4.2))
    try:
        seen: set[int] = set()
        for t, curve in curves:
            b = view.budget_of(t) or len(curve)
            k = budgets.index(b) if b in budgets else 0
            color = colours[k]
            label = f"{view.fidelity or 'epochs'}={b}" if b not in seen else None
            seen.add(b)
            epochs = list(range(1, len(curve) + 1))
            ax.plot(
                epochs,
                curve,
                color=color,
                alpha=0.55,
                linewidth=1.0,
                marker="." if len(curve) == 1 else None,
                label=label,
            )
            if view.rows[t.index].status == "stopped":
                ax.scatter([epochs[-1]], [curve[-1]], marker="x", color="tab:red", s=30, zorder=3)
        best = view.best
        for t, curve in curves:
            if best is not None and t.index == best.index:
                ax.plot(
                    range(1, len(curve) + 1),
                    curve,
                    color="black",
                    linewidth=2.2,
                    label=f"best (trial {t.index})",
                )
        if any(r.status == "stopped" for r in view.rows):
            ax.scatter([], [], marker="x", color="tab:red", label="stopped early")
        ax.set_xlabel("epoch")
        direction = "higher" if objective.higher_is_better else "lower"
        ax.set_ylabel(f"{objective.name} ({direction} is better)", fontsize=9)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.suptitle(f"Learning curves: {len(curves)} trials", fontsize=11)
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)


def front_png(view: RunView) -> bytes:
    """The run's Pareto front over its first two objectives
    (:func:`nasforge.tools.pareto_plot.plot_front`)."""
    _pyplot()
    with tempfile.TemporaryDirectory(prefix="nasforge-report-") as tmp:
        path = Path(tmp) / "front.png"
        plot_front(view.trials, view.front, view.goal, path)
        return path.read_bytes()


def cells_of(view: RunView) -> tuple[tuple[CellTopology, tuple[KeptEdge, ...]], ...] | str:
    """(cell, kept edges) of the best trial's every cell type, or why there is no drawing."""
    space = view.space
    if view.chosen is None:
        return "no feasible trial, so no best cell to draw"
    if space is None:
        return view.space_note or "the run's space is not installed here"
    if SUPERNET not in space.capabilities:
        return (
            f"space '{space.name}' exposes no cell graph (it does not implement the supernet "
            "contract), so the best architecture is shown as text only"
        )
    supernet = as_supernet(space.supernet(), by="the run report's cell drawing")
    kept = supernet.kept_edges(view.chosen)
    return tuple((cell, tuple(edges)) for cell, edges in zip(supernet.topology, kept, strict=True))


def cell_png(cells: Sequence[tuple[CellTopology, Sequence[KeptEdge]]], title: str) -> bytes:
    """Each cell as a graph: nodes left to right in topological order (inputs green, the
    output blue), every kept edge an arrow labelled with its op; zero-op edges left out."""
    plt = _pyplot()
    from matplotlib.patches import FancyArrowPatch

    fig, axes = plt.subplots(len(cells), 1, figsize=(10, 3.6 * len(cells)), squeeze=False)
    palette = plt.get_cmap("tab10")
    try:
        for ax, (cell, edges) in zip((a[0] for a in axes), cells, strict=True):
            nodes = list(cell.nodes)
            out_node = None
            if len(cell.output) > 1:  # several outputs are combined: draw the combination as a node
                out_node = max(nodes) + 1
                nodes.append(out_node)
            x = {n: i for i, n in enumerate(nodes)}
            drawn = [e for e in edges if e.op != cell.ops.zero]
            ops = list(dict.fromkeys(e.op for e in drawn))
            for e in drawn:
                span = x[e.target] - x[e.source]
                # longer edges arc (above for even sources, below for odd ones) over the nodes between
                rad = 0.0 if span == 1 else (-0.35 if e.source % 2 == 0 else 0.35)
                color = palette(cell.ops.names.index(e.op) % 10)
                ax.add_patch(
                    FancyArrowPatch(
                        (x[e.source], 0),
                        (x[e.target], 0),
                        connectionstyle=f"arc3,rad={rad}",
                        arrowstyle="-|>",
                        mutation_scale=14,
                        shrinkA=16,
                        shrinkB=16,
                        color=color,
                        linewidth=1.8,
                    )
                )
                peak = -rad * span / 2  # the arc's height at its middle
                ax.text(
                    (x[e.source] + x[e.target]) / 2,
                    peak if span > 1 else 0.05,
                    e.op,
                    ha="center",
                    va="bottom" if peak >= 0 else "top",
                    fontsize=8,
                    color=color,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                )
            if out_node is not None:
                for n in cell.output:
                    ax.annotate(
                        "",
                        xy=(x[out_node], 0),
                        xytext=(x[n], 0),
                        arrowprops={
                            "arrowstyle": "-|>",
                            "color": "0.6",
                            "linestyle": "dashed",
                            "shrinkA": 16,
                            "shrinkB": 16,
                            "connectionstyle": "arc3,rad=0.3",
                        },
                    )
            for n in nodes:
                if n in cell.inputs:
                    face, label = "#cfeccf", f"in {n}"
                elif n == out_node or (out_node is None and n in cell.output):
                    face, label = "#cfe0f5", "out" if n == out_node else f"out {n}"
                else:
                    face, label = "#f3f3f3", str(n)
                ax.scatter([x[n]], [0], s=900, color=face, edgecolors="0.3", zorder=3)
                ax.text(x[n], 0, label, ha="center", va="center", fontsize=9, zorder=4)
            ax.set_xlim(-0.6, len(nodes) - 0.4)
            reach = 0.2 + 0.175 * max((x[e.target] - x[e.source] for e in drawn), default=1)
            ax.set_ylim(-reach - 0.15, reach + 0.15)
            ax.axis("off")
            zero = f"; '{cell.ops.zero}' edges left out" if cell.ops.zero else ""
            ax.set_title(
                f"{cell.name}: {len(drawn)} edges, ops {', '.join(ops) or 'none'}{zero}",
                fontsize=9,
                loc="left",
            )
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)

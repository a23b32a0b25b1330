"""Scatter plots of metric scores against the objective (matplotlib, imported lazily)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from nasforge.tools import plot_files
from nasforge.tools.scoring.correlate import CorrelationResult, MetricCorrelation


def plot_correlation(result: CorrelationResult, path: str | os.PathLike[str], *, columns: int = 4) -> Path:
    """One panel per metric (log x where the metric is log-scale), written to ``path``.

    A score with no position on the panel's axis (NaN or inf anywhere, zero or negative on
    a log axis) is not drawn but counted in the panel's legend, so a metric that is zero
    for a third of the cells cannot pass for one that ranks them all. Returns the path
    written. The image format follows the suffix (png when there is none); the file
    appears only when complete.
    """
    out = Path(path)
    image_format = plot_format(out)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = result.per_metric
    cols = max(1, min(columns, len(metrics)))
    rows = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 3.1 * rows), squeeze=False)
    targets = np.asarray(result.targets, dtype=float)
    for ax, corr in zip(axes.flat, metrics, strict=False):
        draw_panel(ax, result.table.values(corr.metric), targets, corr, result.objective)
    for ax in list(axes.flat)[len(metrics) :]:
        ax.axis("off")
    fig.suptitle(f"{result.space}: {len(targets)} architectures (seed {result.seed})", fontsize=9)
    fig.tight_layout()
    try:
        plot_files.save_figure(fig, out, image_format)
    finally:
        plt.close(fig)
    return out


def draw_panel(
    ax: Any, scores: np.ndarray, targets: np.ndarray, corr: MetricCorrelation, objective: str
) -> None:
    """One metric's scatter on ``ax``: axis labels, ρ and τ in the title, and a legend that
    counts the cells the axis cannot show."""
    shown, hidden = placeable(scores, log_scale=corr.log_scale)
    if corr.log_scale:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # labelled minor ticks overlap on a narrow panel
    ax.scatter(scores[shown], targets[shown], s=4, alpha=0.5, label=_cells(int(shown.sum())))
    if hidden:
        # an empty handle: the count is the legend entry, there is nothing to draw
        ax.plot([], [], ls="none", marker="x", color="0.4", label=hidden)
    ax.legend(fontsize=6, loc="best", handlelength=1)
    ax.set_title(f"{corr.metric}: ρ={corr.spearman:.3f} τ={corr.kendall:.3f}", fontsize=8)
    ax.set_xlabel(f"{corr.metric} score" + (" (log scale)" if corr.log_scale else ""), fontsize=7)
    ax.set_ylabel(axis_label(objective), fontsize=7)
    ax.tick_params(which="both", labelsize=6)


def placeable(scores: np.ndarray, *, log_scale: bool) -> tuple[np.ndarray, str]:
    """(which scores an axis can place, the legend's count of the rest or "").

    NaN and inf have no position on any axis; zero and negative scores none on a log one.
    """
    finite = np.isfinite(scores)
    shown = finite & (scores > 0) if log_scale else finite
    nonfinite, nonpositive = int((~finite).sum()), int((finite & ~shown).sum())
    if not nonfinite and not nonpositive:
        return shown, ""
    if not log_scale:
        return shown, f"{_cells(nonfinite)} with NaN/inf score\nnot shown"
    parts = [f"{n} {why}" for n, why in ((nonpositive, "score ≤ 0"), (nonfinite, "NaN/inf")) if n]
    return shown, f"{_cells(nonfinite + nonpositive)} not shown on the log axis\n({', '.join(parts)})"


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def axis_label(objective: str) -> str:
    """The objective as an axis label with its unit: accuracies are percentages."""
    words = objective.replace("_", " ")
    if objective.endswith("accuracy"):
        return f"{words} (%)"
    unit = {"ms": "ms", "mb": "MB", "seconds": "s"}.get(objective.rsplit("_", 1)[-1])
    if unit is not None and "_" in objective:
        return f"{objective.rsplit('_', 1)[0].replace('_', ' ')} ({unit})"
    return words


def plot_format(path: str | os.PathLike[str]) -> str:
    """:func:`nasforge.tools.plot_files.plot_format` for this plot (its name in the message)."""
    return plot_files.plot_format(path, feature="correlation plots")

"""Scatter plots of metric scores against the objective (matplotlib, imported lazily)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from nasforge.optional import require
from nasforge.scoring.correlate import CorrelationResult


def plot_correlation(result: CorrelationResult, path: str | os.PathLike[str], *, columns: int = 4) -> Path:
    """One panel per metric (log x where the metric is log-scale), written to ``path``.

    Flagged scores are left out of the panel and counted in its title, since they have
    no position on the axis. Returns the path written.
    """
    require("matplotlib", extra="plot", feature="correlation plots")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = result.per_metric
    cols = max(1, min(columns, len(metrics)))
    rows = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False)
    targets = np.asarray(result.targets)
    for ax, corr in zip(axes.flat, metrics, strict=False):
        x = result.table.values(corr.metric)
        ok = np.isfinite(x)
        if corr.log_scale:
            ok &= x > 0
            ax.set_xscale("log")
        ax.scatter(x[ok], targets[ok], s=4, alpha=0.5)
        ax.set_title(
            f"{corr.metric}\nρ={corr.spearman:.3f} τ={corr.kendall:.3f}"
            + (f" ({corr.n_flagged} flagged)" if corr.n_flagged else ""),
            fontsize=8,
        )
        ax.set_ylabel(result.objective, fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(metrics) :]:
        ax.axis("off")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out

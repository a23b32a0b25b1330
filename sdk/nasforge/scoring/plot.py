"""Scatter plots of metric scores against the objective (matplotlib, imported lazily)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from nasforge.atomic_files import atomic_path
from nasforge.errors import NasforgeError
from nasforge.optional import require
from nasforge.scoring.correlate import CorrelationResult


def plot_correlation(result: CorrelationResult, path: str | os.PathLike[str], *, columns: int = 4) -> Path:
    """One panel per metric (log x where the metric is log-scale), written to ``path``.

    Flagged scores are left out of the panel and counted in its title, since they have
    no position on the axis. Returns the path written. The image format follows the
    suffix (png when there is none); the file appears only when complete.
    """
    out = Path(path)
    image_format = plot_format(out)
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
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # The temporary name ends in .part, so the format must be given, not guessed.
        with atomic_path(out) as tmp:
            fig.savefig(tmp, dpi=120, format=image_format)
    except OSError as exc:
        raise NasforgeError(f"cannot write the plot {out}: {exc.strerror or exc}") from exc
    finally:
        plt.close(fig)
    return out


def plot_format(path: str | os.PathLike[str]) -> str:
    """The image format ``path``'s suffix names (png when none); a path no plot can go to is refused.

    Cheap and free of side effects, so a command can call it before hours of scoring: a
    typo in the suffix (``.pgn``), a missing matplotlib or a directory given for a file
    should cost one line, not the work done before the plot.
    """
    require("matplotlib", extra="plot", feature="correlation plots")
    from matplotlib.backend_bases import FigureCanvasBase

    out = Path(path)
    suffix = out.suffix.lstrip(".").lower() or "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if suffix not in supported:
        raise NasforgeError(f"cannot write a plot as '.{suffix}' (supported: {', '.join(sorted(supported))})")
    if out.is_dir():
        raise NasforgeError(f"cannot write the plot {out}: it is a directory")
    return suffix

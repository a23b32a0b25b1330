"""The report's figures as PNG files: convergence curves, loss contours, gradient variance.

matplotlib is the optional ``plot`` extra: it is imported here only, when a figure is
drawn, and a missing one is a one-line error naming the extra. Figures are drawn on
their own ``Figure`` objects (no pyplot state, safe beside other threads) and written
under a temporary name, renamed when complete, so no PNG is ever seen half written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nasforge.kernel.optional import require
from nasforge.tools.plot_files import save_figure
from nasforge_insight.convergence import Curve
from nasforge_insight.landscape import Surface

FEATURE = "insight figures"


def _figure(width: float, height: float) -> Any:
    require("matplotlib", extra="plot", feature=FEATURE)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save_png(fig: Any, path: str | os.PathLike[str], *, dpi: int = 110) -> Path:
    """The core's atomic plot save (temporary name, renamed when complete), as PNG."""
    return save_figure(fig, path, "png", dpi=dpi)


def _mean(rows: Sequence[Sequence[float]]) -> list[float]:
    n = min(len(r) for r in rows)
    return [sum(r[i] for r in rows) / len(rows) for i in range(n)]


def _smooth(values: Sequence[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def convergence_figure(curves: Mapping[str, Sequence[Curve]], path: str | os.PathLike[str]) -> Path:
    """Training loss per step (mean over seeds, smoothed) and held-out loss per epoch."""
    fig = _figure(10, 4)
    steps_ax, epochs_ax = fig.subplots(1, 2)
    for label, runs in curves.items():
        per_step = _mean([c.step_loss for c in runs])
        steps_per_epoch = max(1, len(per_step) // len(runs[0].epoch_loss))
        xs = [(i + 1) / steps_per_epoch for i in range(len(per_step))]
        (line,) = steps_ax.plot(xs, _smooth(per_step, max(1, steps_per_epoch // 4)), label=label, lw=1.4)
        lo = [min(c.step_loss[i] for c in runs) for i in range(len(per_step))]
        hi = [max(c.step_loss[i] for c in runs) for i in range(len(per_step))]
        if len(runs) > 1:
            steps_ax.fill_between(
                xs,
                _smooth(lo, steps_per_epoch),
                _smooth(hi, steps_per_epoch),
                color=line.get_color(),
                alpha=0.15,
            )
        test = _mean([c.test_loss for c in runs])
        epochs_ax.plot(range(1, len(test) + 1), test, marker="o", ms=3, color=line.get_color(), label=label)
    seeds = sorted({c.seed for runs in curves.values() for c in runs})
    steps_ax.set(
        xlabel="epoch",
        ylabel="training loss",
        yscale="log",
        title=f"training loss (mean of {len(seeds)} seed{'s' if len(seeds) > 1 else ''})",
    )
    epochs_ax.set(xlabel="epoch", ylabel="held-out loss", yscale="log", title="held-out loss per epoch")
    # beside the panels, not on them: a trend study's twenty-odd genotypes would cover the curves
    handles, labels = steps_ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=7, ncols=1 + (len(labels) - 1) // 28)
    steps_ax.grid(alpha=0.3)
    epochs_ax.grid(alpha=0.3)
    return save_png(fig, path)


def log_range(losses: Sequence[float]) -> tuple[float, float] | None:
    """(min, max) of log10 of ``losses``: one colour scale for several landscapes."""
    import math

    logs = [math.log10(max(v, 1e-8)) for v in losses if math.isfinite(v)]
    return (min(logs), max(logs)) if logs else None


def contour_figure(
    surface: Surface, title: str, path: str | os.PathLike[str], *, scale: tuple[float, float] | None = None
) -> Path:
    """Filled contours of the loss surface (log scale), the weights at the centre (a star).

    ``scale`` fixes the colour range (log10 loss) so several landscapes compare directly.
    """
    import numpy as np

    fig = _figure(4.2, 3.6)
    ax = fig.subplots()
    z = np.nan_to_num(np.log10(np.maximum(np.asarray(surface.losses), 1e-8)), nan=8.0, posinf=8.0)
    lo, hi = scale if scale is not None and scale[1] > scale[0] else (float(z.min()), float(z.max()) + 1e-6)
    levels = np.linspace(lo, hi, 21)
    filled = ax.contourf(surface.alphas, surface.betas, np.clip(z, lo, hi), levels=levels, cmap="viridis")
    ax.contour(surface.alphas, surface.betas, z, levels=levels[::2], colors="white", linewidths=0.4)
    ax.plot([0], [0], marker="*", color="red", ms=8)
    fig.colorbar(filled, ax=ax, label="log10 loss")
    ax.set(xlabel="direction 1", ylabel="direction 2", title=title)
    ax.title.set_fontsize(8)
    return save_png(fig, path)


def variance_figure(values: Mapping[str, tuple[float, float]], path: str | os.PathLike[str]) -> Path:
    """sqrt(gradient variance) at initialisation and after the probe's training, per genotype."""
    fig = _figure(6, 3.2)
    ax = fig.subplots()
    labels = list(values)
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], [values[k][0] ** 0.5 for k in labels], 0.4, label="at initialisation")
    ax.bar([x + 0.2 for x in xs], [values[k][1] ** 0.5 for k in labels], 0.4, label="after training")
    ax.set_xticks(list(xs), labels, rotation=15, fontsize=7)
    ax.set(ylabel="sqrt(gradient variance)", title="gradient variance (trace of covariance)")
    ax.legend(fontsize=7)
    return save_png(fig, path)


def require_plots() -> None:
    """Fail in one line, before any training, when matplotlib is missing."""
    require("matplotlib", extra="plot", feature=FEATURE)

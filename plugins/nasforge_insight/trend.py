"""Chapter 4's claim as one number: do wider, shallower cells converge faster?

Three hand-picked networks (the original, its widest and its deepest variant) show the
direction of an effect but not its strength. Over every genotype a report trained (all
connection and operation variants together), the rank correlation of the normal cell's
width with how fast the held-out loss fell (its mean over the epochs, what the thesis
plots) says how much of convergence speed width explains; a bootstrap over genotypes
gives its 95 % interval. Wider converging faster is a *negative* correlation (a smaller
mean loss); depth is expected to go the other way.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from nasforge.tools.scoring import spearman


@attrs.frozen
class Trend:
    """Spearman of ``x`` with ``y`` over ``n`` genotypes, with a bootstrap 95 % interval."""

    x: str
    y: str
    rho: float
    low: float
    high: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def describe(self) -> str:
        interval = f"[{self.low:+.2f}, {self.high:+.2f}]"
        return f"Spearman({self.x}, {self.y}) = {self.rho:+.2f} {interval}, n = {self.n}"


def trend(
    points: Sequence[tuple[float, float]],
    *,
    x: str,
    y: str,
    draws: int = 2000,
    seed: int = 0,
) -> Trend | None:
    """Spearman of the points' first against their second values, and a percentile
    bootstrap interval (genotypes resampled with replacement; resamples with one value
    repeated are skipped); None with fewer than 4 points."""
    if len(points) < 4:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    rng = random.Random(seed)
    values = []
    for _ in range(draws):
        pick = [rng.randrange(len(points)) for _ in points]
        bx, by = [xs[i] for i in pick], [ys[i] for i in pick]
        if len(set(bx)) < 2 or len(set(by)) < 2:
            continue
        value = spearman(bx, by)
        if math.isfinite(value):
            values.append(value)
    values.sort()
    low = values[int(0.025 * len(values))] if values else math.nan
    high = values[max(0, int(0.975 * len(values)) - 1)] if values else math.nan
    return Trend(x, y, spearman(xs, ys), low, high, len(points))


def width_trends(results: Sequence[Any], shape: Callable[[Any], tuple[float, int]]) -> list[Trend]:
    """Width and depth of the normal cell (``shape(result)``) against the held-out and the
    training loss's mean over epochs, over every result with a summary."""
    rows = [(shape(r), r.summary) for r in results if r.summary is not None and r.subject.cells]
    out = []
    for index, axis in ((0, "width"), (1, "depth")):
        for attribute, label in (("held_out_auc", "held-out loss"), ("auc", "training loss")):
            found = trend(
                [(float(s[index]), float(getattr(summary, attribute))) for s, summary in rows],
                x=f"{axis} of the normal cell",
                y=f"mean {label} over epochs",
            )
            if found is not None:
                out.append(found)
    return out

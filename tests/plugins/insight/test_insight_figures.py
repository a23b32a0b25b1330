"""The convergence figure stays readable with the many genotypes of a trend study."""

from __future__ import annotations

from typing import Any

import pytest

from nasforge_insight import figures
from nasforge_insight.convergence import Curve

pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402


def _curve(label: str, k: int) -> Curve:
    steps = [2.0 / (1 + i / (10 + k)) for i in range(40)]
    return Curve(
        label=label,
        seed=0,
        step_loss=steps,
        epoch_loss=[sum(steps[e * 10 : e * 10 + 10]) / 10 for e in range(4)],
        test_loss=[1.5 - 0.2 * e - 0.01 * k for e in range(4)],
        test_accuracy=0.9,
        seconds=1.0,
    )


@pytest.mark.parametrize("count", [3, 22])
def test_the_legend_covers_no_panel(count: int, tmp_path, monkeypatch) -> None:
    drawn: dict[str, Any] = {}
    save = figures.save_png

    def keep(fig: Any, path: Any, **kwargs: Any) -> Any:
        drawn["fig"] = fig
        return save(fig, path, **kwargs)

    monkeypatch.setattr(figures, "save_png", keep)
    curves = {f"GENOTYPE_{k} CONN{k}": [_curve(f"g{k}", k)] for k in range(count)}
    assert figures.convergence_figure(curves, tmp_path / "c.png").stat().st_size > 0
    fig = drawn["fig"]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays out as the saved file was
    renderer = canvas.get_renderer()
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None] + list(fig.legends)
    assert len(legends) == 1 and len(legends[0].get_texts()) == count  # every genotype named once
    box = legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        panel = ax.get_window_extent(renderer)
        assert not box.overlaps(panel), f"the legend of {count} genotypes covers a panel"

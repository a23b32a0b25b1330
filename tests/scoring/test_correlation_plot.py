"""The correlate scatter (issue 10): labelled axes, and scores a log axis cannot place are
counted in the legend, never silently dropped."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring.correlate import CorrelationResult, MetricCorrelation
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.plot import axis_label, draw_panel, placeable, plot_correlation
from nasforge.tools.scoring.table import ScoreTable


def test_placeable_counts_what_a_log_axis_cannot_show() -> None:
    scores = np.array([1.0, 0.0, -2.0, math.nan, math.inf, 3.0, 0.0])
    shown, label = placeable(scores, log_scale=True)
    assert shown.tolist() == [True, False, False, False, False, True, False]
    assert label == "5 cells not shown on the log axis\n(3 score ≤ 0, 2 NaN/inf)"
    shown, label = placeable(scores, log_scale=False)
    assert shown.sum() == 5 and label == "2 cells with NaN/inf score\nnot shown"
    shown, label = placeable(np.array([1.0, 2.0]), log_scale=True)
    assert shown.all() and label == ""


def test_axis_labels_carry_units() -> None:
    assert axis_label("test_accuracy") == "test accuracy (%)"
    assert axis_label("valid_accuracy") == "valid accuracy (%)"
    assert axis_label("latency_ms") == "latency (ms)"
    assert axis_label("params_mb") == "params (MB)"
    assert axis_label("proxy") == "proxy"


def _fake_result(n: int = 40, zeros: int = 12) -> CorrelationResult:
    """A log-scale metric that is 0 for ``zeros`` cells and NaN for one (as synflow is on
    cells without a path from input to output)."""
    rng = np.random.default_rng(0)
    values = np.exp(rng.normal(size=n))
    values[:zeros] = 0.0
    values[zeros] = math.nan
    genotypes = [Genotype("fake", "1", (i,)) for i in range(n)]
    info = MetricInfo(name="fake_synflow", higher_is_better=True, needs_data=False, needs_labels=False)
    table = ScoreTable(
        genotypes=genotypes,
        metrics=("fake_synflow",),
        infos={"fake_synflow": info},
        rows=[{"fake_synflow": MetricScore("fake_synflow", v)} for v in values],
    )
    corr = MetricCorrelation(
        "fake_synflow", 0.5, 0.4, n=n, n_flagged=1, higher_is_better=True, log_scale=True
    )
    targets = tuple(float(x) for x in 85 + 5 * rng.random(n))
    return CorrelationResult(
        space="fake", objective="test_accuracy", seed=0, per_metric=(corr,), table=table, targets=targets
    )


def test_a_panel_labels_its_axes_and_counts_the_hidden_cells() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = _fake_result()
    fig, ax = plt.subplots()
    try:
        corr = result.per_metric[0]
        draw_panel(ax, result.table.values(corr.metric), np.asarray(result.targets), corr, result.objective)
        assert ax.get_xlabel() == "fake_synflow score (log scale)" and ax.get_xscale() == "log"
        assert ax.get_ylabel() == "test accuracy (%)"
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["27 cells", "13 cells not shown on the log axis\n(12 score ≤ 0, 1 NaN/inf)"]
        assert len(ax.collections[0].get_offsets()) == 27
    finally:
        plt.close(fig)


def test_the_plot_file_is_written_whole(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = plot_correlation(_fake_result(), tmp_path / "scatter.svg")
    text = out.read_text()
    assert "13 cells not shown on the log axis" in text and "test accuracy (%)" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scatter.svg"]

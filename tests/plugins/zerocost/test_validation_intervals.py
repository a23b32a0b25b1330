"""The validation script's intervals, vote lines and paired comparisons."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nasforge_zerocost import validation
from nasforge_zerocost.confidence import bootstrap_interval, spearman_interval


def test_spearman_interval_is_the_fisher_z_interval() -> None:
    low, high = spearman_interval(0.5, 1000)
    half = 1.959963984540054 * math.sqrt((1 + 0.125) / 997)
    z = math.atanh(0.5)
    assert (low, high) == pytest.approx((math.tanh(z - half), math.tanh(z + half)))
    small = spearman_interval(0.5, 100)
    assert small[0] < low < 0.5 < high < small[1]
    assert all(math.isnan(v) for v in spearman_interval(float("nan"), 100))
    assert all(math.isnan(v) for v in spearman_interval(0.5, 3))


def test_bootstrap_interval_is_seeded_and_brackets_the_statistic() -> None:
    data = np.random.default_rng(0).normal(size=200)

    def mean(idx: np.ndarray) -> float:
        return float(data[idx].mean())

    a = bootstrap_interval(mean, data.size, draws=200, seed=3)
    assert a == bootstrap_interval(mean, data.size, draws=200, seed=3)
    assert a[0] < data.mean() < a[1]
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_interval(mean, data.size, draws=1)


def test_the_script_prints_intervals_the_vote_and_comparisons(tmp_path, capsys) -> None:
    argv = ["--metrics", "synflow,jacob_cov,snip,ensemble_vote", "--sample", "8", "--batch-size", "4"]
    argv += ["--compare", "synflow,params", "--ci-draws", "20", "--cache", str(tmp_path / "cache")]
    argv += ["--json", str(tmp_path / "out.json")]
    assert validation.main(argv) == 0
    out = capsys.readouterr().out
    assert "Spearman (measured) [95% CI]" in out
    assert "pairwise vote agreement, majority of synflow, jacob_cov, snip:" in out
    assert "pairwise vote agreement, ensemble_vote column:" in out
    assert "published vote: 0.817 (zc)" in out
    assert "Spearman synflow - params:" in out  # params joined the metrics to be compared
    written = json.loads((tmp_path / "out.json").read_text())
    assert {m["metric"] for m in written["metrics"]} >= {"synflow", "params", "ensemble_vote"}
    assert all(len(m["spearman_ci95"]) == 2 for m in written["metrics"])
    assert any("vote agreement" in line for line in written["notes"])


def test_a_bad_compare_is_one_usage_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        validation.main(["--compare", "synflow"])
    assert exit_.value.code == 2
    assert "--compare takes two metric names" in capsys.readouterr().err

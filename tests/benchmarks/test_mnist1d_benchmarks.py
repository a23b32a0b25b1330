"""The MNIST-1D benchmarks' statistics: equal-epoch cuts, paired bootstrap, intervals, NES-RS."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import multifidelity_mnist1d as mf  # noqa: E402
import nesbs_mnist1d as nm  # noqa: E402


def _trial(value: float, fidelity: int | None, epochs: int | None = None, stopped: bool = False):
    metadata = {} if epochs is None else {"epochs": epochs}
    if stopped:
        metadata["stopped_at"] = epochs
    return SimpleNamespace(
        genotype=f"g{value}",
        fidelity=fidelity,
        result=SimpleNamespace(failed=False, objectives={"valid_accuracy": value}, metadata=metadata),
    )


def test_the_anytime_curve_counts_epochs_and_only_full_trainings_choose() -> None:
    outcome = SimpleNamespace(
        history=[
            _trial(50.0, 1),
            _trial(80.0, 9),
            _trial(99.0, 3),
            _trial(85.0, None, 4, stopped=True),
            _trial(90.0, 9),
        ]
    )
    points = mf.curve(outcome, 9)
    assert [p[0] for p in points] == [1, 10, 13, 17, 26]
    assert [p[1] for p in points] == [
        -math.inf,
        80.0,
        80.0,
        80.0,
        90.0,
    ]  # a 3-epoch or pruned trial never chooses
    assert mf.at_budget(points, 20) == (80.0, "g80.0")
    assert mf.at_budget(points, 26) == (90.0, "g90.0")
    assert mf.at_budget(points, 0) == (-math.inf, None)


def test_interval_over_seeds() -> None:
    mean, low, high = nm.interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0 and low == pytest.approx(3.0 - 2.78 * math.sqrt(2.5) / math.sqrt(5))
    assert high == pytest.approx(6.0 - low)


def test_paired_bootstrap_pools_examples_over_seeds() -> None:
    rows = [
        {
            "trained": {
                "methods": {
                    "a": {"per_example_nll": [1.0, 2.0, 3.0]},
                    "b": {"per_example_nll": [2.0, 2.0, 4.0]},
                }
            }
        },
        {
            "trained": {
                "methods": {"a": {"per_example_nll": [0.5, 0.5]}, "b": {"per_example_nll": [1.5, 0.5]}}
            }
        },
    ]
    mean, low, high = nm.paired_bootstrap(rows, "a", "b", "per_example_nll", draws=500)
    assert mean == pytest.approx(-3.0 / 5) and low <= mean <= high and high <= 0.0
    same = nm.paired_bootstrap(rows, "a", "a", "per_example_nll", draws=50)
    assert same == (0.0, 0.0, 0.0)
    wrong = [
        {"trained": {"methods": {"a": {"per_example_wrong": [0, 1]}, "b": {"per_example_wrong": [1, 1]}}}}
    ]
    assert nm.paired_bootstrap(wrong, "a", "b", "per_example_wrong", draws=50)[0] == pytest.approx(-50.0)


def test_forward_selection_takes_what_lowers_the_nll_most() -> None:
    y = torch.tensor([0, 1, 0, 1])
    good = torch.tensor([[4.0, 0.0], [0.0, 4.0], [4.0, 0.0], [0.0, 4.0]])
    bad = -good
    assert nm.forward_select([bad, good, good * 0.5], y, 2)[0] == 1


def test_settings_that_cannot_compare_are_refused() -> None:
    with pytest.raises(SystemExit):
        nm.parse_args(["--seeds", "2", "--trained-seeds", "3"])
    with pytest.raises(SystemExit):
        nm.parse_args(["--T", "30", "--budgets", "20"])
    assert mf.main(["--methods", "sh"]) == 2  # random search is the reference


def test_parameter_free_share_counts_none_skip_and_pooling() -> None:
    # NB201's ops in order: none, skip_connect, nor_conv_1x1, nor_conv_3x3, avg_pool_3x3
    one_seed = [[[0, 1, 4, 2, 3, 3]], [[2, 2, 2, 2, 2, 2], [0, 0, 0, 0, 0, 0]]]
    assert nm.parameter_free_share([one_seed]) == pytest.approx(100.0 * 9 / 18)
    assert nm.parameter_free_share([]) == 0.0


def test_calibration_reuses_a_recorded_pool_of_the_same_settings(tmp_path: Path) -> None:
    runs = ["--runs", str(tmp_path), "--calibrate", "9"]
    args = nm.parse_args(["--seeds", "1", "--trained-seeds", "1", *runs])
    assert nm.recorded_pool(0, args) is None
    code = nm.code_version("nasforge", "nasforge_nesbs", "nasforge_nb201")
    records = nm.RecordFile(tmp_path / "records.jsonl", code)
    pool = {"members": [[0, 1, 2, 3, 4, 0]], "trained_error": [3.0], "trained_nll": [0.1], "epochs": 8}
    settings = {"seed": 0, "C": 8, "N": 1, "pool": 16, "member_epochs": 8}
    records.append(settings, {"quality": pool})
    records.append({**settings, "seed": 1, "pool": 12}, {"quality": {**pool, "epochs": 99}})
    assert nm.recorded_pool(0, args) == pool
    assert nm.recorded_pool(1, args) is None  # another pool size is another pool
    wider = nm.parse_args(["--seeds", "1", "--trained-seeds", "1", "--C", "16", *runs])
    assert nm.recorded_pool(0, wider) is None


def test_a_method_without_a_choice_within_the_cut_keeps_the_seeds_paired() -> None:
    """A method that has no full-budget trial within the equal-epoch cut chose nothing on
    that seed: it is left out of its own mean and of the paired difference, not shifted
    against random search's other seeds (a zip would have misaligned them)."""
    assert mf.paired([98.0, None, 97.0], [97.5, 98.0, None]) == [(98.0, 97.5)]
    assert mf.shown(None) == "-" and mf.shown(97.456) == "97.46"


@pytest.mark.slow
def test_the_insight_trend_is_drawn_from_a_report(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import insight_convergence as ic

    def genotype(label: str, width: float, losses: list[list[float]]) -> dict:
        curves = [{"test_loss": ls, "held_out_auc": sum(ls) / len(ls)} for ls in losses]
        return {"label": label, "cells": [{"cell": "normal", "width": width}], "curves": curves}

    report = {
        "dataset": "mnist1d",
        "settings": {"build": {"C": 4, "layers": 3}, "probe": {"epochs": 2}, "seeds": [0, 1]},
        "trends": [{"x": "width of the normal cell", "y": "mean held-out loss over epochs", "rho": -0.5,
                    "low": -0.9, "high": 0.2, "n": 3}],
        "genotypes": [
            genotype("DARTS_V2", 2.0, [[1.0, 0.5], [1.2, 0.6]]),
            genotype("DARTS_V2 conn1", 3.0, [[0.9, 0.4], [1.0, 0.5]]),
            genotype("SNAS_MILD", 3.5, [[0.8, 0.3], [0.9, 0.35]]),
        ],
    }  # fmt: skip
    ic.trend_figure(report, tmp_path / "trend.png")
    assert (tmp_path / "trend.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

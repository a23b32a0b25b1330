"""The convergence study's trend statistic, its cautions, operation variants from the CLI,
and held-out loss and accuracy per epoch on MNIST-1D."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from nasforge import get_registry
from nasforge_insight.cautions import AT_CHANCE, at_chance, parameter_spread
from nasforge_insight.published_cells import DARTS_V2
from nasforge_insight.subjects import resolve, with_op_variants
from nasforge_insight.trend import trend, width_trends
from tests.cli_run import run_main

WIDE = "|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
CHAIN = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"


@pytest.mark.slow
def test_trend_is_the_rank_correlation_with_a_bootstrap_interval() -> None:
    points = [(float(w), 10.0 - w + 0.1 * (w % 3)) for w in range(12)]
    found = trend(points, x="width", y="loss")
    assert found is not None and found.n == 12
    assert found.rho == pytest.approx(-1.0, abs=0.05)
    assert found.low <= found.rho <= found.high and found.high < 0
    assert trend(points, x="width", y="loss") == found  # seeded: the same interval every time
    assert trend(points[:3], x="width", y="loss") is None


@pytest.mark.slow
def test_no_relation_gives_an_interval_across_zero() -> None:
    points = [(float(i % 4), float((i * 7) % 5)) for i in range(40)]
    found = trend(points, x="width", y="loss")
    assert found is not None and found.low < 0 < found.high


def _result(label: str, width: float, depth: int, held: float, train: float, accuracy: float, params: int):
    shape = SimpleNamespace(width=width, depth=depth)
    cell = SimpleNamespace(shape=lambda: shape)
    summary = SimpleNamespace(held_out_auc=held, auc=train, test_accuracy=accuracy)
    return SimpleNamespace(
        subject=SimpleNamespace(label=label, cells=(cell,)), summary=summary, parameters=params
    )


def test_width_trends_cover_width_and_depth_against_both_losses() -> None:
    results = [_result(f"v{i}", 1.0 + i, 6 - i, 1.0 - 0.1 * i, 2.0 - 0.1 * i, 0.9, 1000) for i in range(5)]
    found = width_trends(
        results, lambda r: (r.subject.cells[0].shape().width, r.subject.cells[0].shape().depth)
    )
    assert [(t.x.split()[0], t.y) for t in found] == [
        ("width", "mean held-out loss over epochs"),
        ("width", "mean training loss over epochs"),
        ("depth", "mean held-out loss over epochs"),
        ("depth", "mean training loss over epochs"),
    ]
    assert found[0].rho == pytest.approx(-1.0) and found[2].rho == pytest.approx(1.0)


def test_cautions_name_networks_at_chance_and_a_parameter_spread() -> None:
    trained = _result("ok", 3.0, 2, 0.5, 0.4, 0.9, 1000)
    stuck = _result("stuck", 2.0, 3, 2.3, 2.3, AT_CHANCE * 0.1 - 0.01, 1000)
    assert at_chance([trained], 10) == []
    (caution,) = at_chance([trained, stuck], 10)
    assert "'stuck' is at chance" in caution and "not the neighbourhood of an optimum" in caution
    assert parameter_spread([trained, _result("b", 1.0, 1, 0, 0, 0.9, 1090)]) == []
    (spread,) = parameter_spread([trained, _result("big", 1.0, 1, 0, 0, 0.9, 1300)])
    assert "differ by 30 %" in spread and "'big'" in spread


def test_operation_variants_keep_the_topology_and_redraw_ops() -> None:
    base = resolve(DARTS_V2, get_registry(), label="DARTS_V2")
    variants = with_op_variants(base, 3)
    assert [v.label for v in variants] == ["DARTS_V2 OPS1", "DARTS_V2 OPS2", "DARTS_V2 OPS3"]
    for v in variants:
        assert v.cells[0].shape() == base.cells[0].shape()  # the topology is kept
    assert any(v.text != base.text for v in variants)


@pytest.mark.slow
def test_insight_on_mnist1d_with_op_variants_reports_held_out_curves_and_trends(tmp_path) -> None:
    pytest.importorskip("mnist1d")
    argv = ["insight", WIDE, CHAIN, "--op-variants", "2", "--dataset", "mnist1d", "--limit", "300"]
    argv += [
        "--build-option",
        "C=4",
        "--build-option",
        "N=1",
        "--epochs",
        "2",
        "--samples",
        "16",
        "--grid",
        "2",
    ]
    code, stdout, stderr = run_main(*argv, "--out", tmp_path / "r", "--json", "-q")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["dataset"] == "mnist1d"
    assert [g["label"] for g in doc["genotypes"]][-2:] == ["nb201 OPS1", "nb201 OPS2"]
    curve = doc["genotypes"][0]["curves"][0]
    assert len(curve["test_loss"]) == len(curve["test_accuracies"]) == 2
    assert math.isfinite(doc["genotypes"][0]["convergence"]["held_out_auc"])
    assert len(doc["trends"]) == 4 and all(t["n"] == 4 for t in doc["trends"])
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "held-out loss, mean over epochs" in page and "Spearman(width of the normal cell" in page

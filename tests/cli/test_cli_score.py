"""`nasforge score` and `nasforge correlate` on small NB201 networks."""

from __future__ import annotations

import pytest

SMALL = ["--build-option", "C=4", "--build-option", "N=1", "--batch-size", "8", "-q"]


@pytest.mark.slow
def test_score_sample_json_and_cache(cli, tmp_path) -> None:
    args = [
        "score",
        "--space",
        "nb201",
        "--sample",
        "3",
        "-m",
        "synflow",
        "-m",
        "params",
        *SMALL,
        "--cache",
        tmp_path / "cache",
        "--json",
    ]
    first = cli(*args, ok=True).json()
    assert len(first["rows"]) == 3 and first["metrics"] == ["synflow", "params"]
    assert all(r["text"].startswith("|") for r in first["rows"])
    second = cli(*args, ok=True).json()
    assert second["rows"] == first["rows"], "a cached rerun gives the same scores"
    assert any((tmp_path / "cache").iterdir())


def test_score_a_genotype_string_flags_nan(cli) -> None:
    """A cell of only `none` has no signal: jacob_cov is NaN and naswot -inf, flagged not fatal."""
    all_none = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
    run = ["score", all_none, "--space", "nb201", "-m", "jacob_cov", "-m", "naswot", *SMALL, "--no-cache"]
    scores = cli(*run, "--json", ok=True).json()["rows"][0]["scores"]
    assert scores["jacob_cov"]["value"] == "nan" and scores["naswot"]["value"] == "-inf"
    table = cli(*run, ok=True).out
    assert "nan" in table and "inf" in table


def test_correlate_prints_baselines_and_plot(cli, tmp_path) -> None:
    out = cli(
        "correlate",
        "--space",
        "nb201",
        "-m",
        "synflow",
        "--sample",
        "24",
        *SMALL,
        "--no-cache",
        "--plot",
        tmp_path / "c.png",
        "--json",
        ok=True,
    ).json()
    names = {m["metric"] for m in out["metrics"]}
    assert names == {"synflow", "params", "flops"}, "params and flops are always baselines"
    assert out["sample"] == 24
    for m in out["metrics"]:
        assert -1.0 <= m["spearman"] <= 1.0
    assert (tmp_path / "c.png").stat().st_size > 0


@pytest.mark.slow
def test_bad_metric_name(cli) -> None:
    cli("score", "--sample", "1", "-m", "synflw").assert_one_line_error(
        "unknown metric 'synflw'", "did you mean 'synflow'"
    )


def test_score_needs_something(cli) -> None:
    cli("score", "--space", "nb201").assert_one_line_error("--sample")

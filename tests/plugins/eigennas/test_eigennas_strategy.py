"""Eigen-NAS as a strategy: the score it ranks by, the top-k it asks, the protocol it follows."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from nasforge import NasforgeError
from nasforge.api import load_space
from nasforge.kernel.errors import OptionError
from nasforge.kernel.metric import MetricContext
from nasforge.kernel.registry import get_registry
from nasforge.kernel.result import Result
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge_eigennas import (
    EigenNas,
    EigenNasTrace,
    MLPResSpace,
    ScoreSettings,
    draw_candidates,
    score_candidates,
)
from nasforge_eigennas.plugin import CANDIDATES_FILE

TOY = {
    "sample_size": 30,
    "top_k": 5,
    "batch_size": 6,
    "score_data": "gaussian",
    "input_shape": [8],
    "num_classes": 3,
}
NB201 = {
    "sample_size": 16,
    "top_k": 4,
    "batch_size": 8,
    "score_data": "gaussian",
    "input_shape": [3, 8, 8],
    "build": {"C": 4, "N": 1},
}


def _strategy(space=None, **options) -> EigenNas:
    space = space or ToySpace()
    return EigenNas(space, objective=ToyEvaluator(space).objective, seed=3, **{**TOY, **options})


# --- the score ------------------------------------------------------------------------------
def test_trace_is_the_mean_squared_per_sample_loss_gradient() -> None:
    """Σ_i ‖∇_θ CE(f(x_i), y_i)‖² / N, each sample forwarded alone in train mode (BatchNorm on it)."""
    g = load_space("nb201").parse(
        "|nor_conv_3x3~0|+|skip_connect~0|avg_pool_3x3~1|+|nor_conv_1x1~0|none~1|skip_connect~2|"
    )
    model = seeded_build(lambda: load_space("nb201").build(g, C=4, N=1), 0).train()
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(5, 3, 8, 8, generator=gen), torch.randint(0, 10, (5,), generator=gen)
    total = 0.0
    for i in range(5):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        total += sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None)
    got = EigenNasTrace().score(model, (x, y), ctx=MetricContext(num_classes=10))
    assert got == pytest.approx(total / 5, rel=1e-5)


def test_trace_shares_the_kernel_with_mgm_and_bounds_lambda_min() -> None:
    space = MLPResSpace(depth=4)
    gs = draw_candidates(space, 6, random.Random(0))
    table = score_candidates(
        space, gs, ScoreSettings(batch_size=12, input_shape=(1, 8, 8)), metrics=["knas", "ntk_lambda_min"]
    )
    for row in table.rows:
        trace, mgm = row["eigennas_trace"].value, row["knas"].value
        assert 0 < mgm <= trace  # the mean of a PSD Gram's entries is at most its mean diagonal
    assert len({r["eigennas_trace"].value for r in table.rows}) == len(gs)


def test_scores_are_cached_by_settings(tmp_path) -> None:
    space = MLPResSpace(depth=3)
    gs = draw_candidates(space, 5, random.Random(1))
    settings = ScoreSettings(batch_size=4, input_shape=(1, 8, 8))
    first = score_candidates(space, gs, settings, cache=tmp_path)
    again = score_candidates(space, gs, settings, cache=tmp_path)
    assert [r["eigennas_trace"].value for r in again.rows] == [r["eigennas_trace"].value for r in first.rows]
    assert all(r["eigennas_trace"].cached for r in again.rows)
    other = score_candidates(
        space, gs, ScoreSettings(batch_size=4, input_shape=(1, 8, 8), init_seed=1), cache=tmp_path
    )
    assert not any(r["eigennas_trace"].cached for r in other.rows)
    tilted = score_candidates(MLPResSpace(depth=3, leaky_slope=0.2), gs, settings, cache=tmp_path)
    assert not any(r["eigennas_trace"].cached for r in tilted.rows)  # a space option keys its own shard


# --- ask / tell ---------------------------------------------------------------------------
def test_asks_the_top_k_by_score_then_repeats_the_best() -> None:
    s = _strategy()
    evaluator = ToyEvaluator(s.space)
    ranked = s.score_pool()
    assert len(ranked) == 30 and all(math.isfinite(r.score) for r in ranked)
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    asked = []
    for _ in range(5):
        g = s.ask()
        asked.append(g)
        s.tell(g, evaluator.evaluate(g))
    assert asked == [r.genotype for r in ranked[:5]]
    best = max(asked, key=lambda g: evaluator.evaluate(g).objectives["score"])
    assert s.finished and s.best == best
    assert s.ask() == best == s.ask()  # nothing new to propose


def test_the_pool_is_the_whole_space_when_small_and_depends_on_the_seed_only() -> None:
    space = MLPResSpace(depth=3)  # 50 architectures
    assert len(draw_candidates(space, 50, random.Random(0))) == 50
    a = draw_candidates(space, 20, random.Random(5))
    assert len(set(a)) == 20 and a == draw_candidates(space, 20, random.Random(5))
    pools = {
        metric: [r.genotype for r in _strategy(metric=metric).score_pool()]
        for metric in ("eigennas_trace", "knas")
    }
    assert set(pools["eigennas_trace"]) == set(pools["knas"])  # one pool, two rankings


def test_failed_results_are_never_chosen() -> None:
    s = _strategy()
    first, second = s.ask(), s.ask()
    s.tell(first, Result(objectives={}, failed=True, error="boom"))
    assert s.best is None and s.ask() != first
    s.tell(second, Result(objectives={"score": 1.0}))
    assert s.best == second


@pytest.mark.parametrize(
    ("options", "message"),
    [({"top_k": 0}, "top_k"), ({"top_k": 40}, "sample_size"), ({"metric": "ensemble"}, "population")],
)
def test_bad_options_are_one_line(options, message) -> None:
    with pytest.raises(OptionError, match=message):
        _strategy(**options)


def test_unknown_metric_is_refused_at_once() -> None:
    with pytest.raises(NasforgeError, match="no-such-metric"):
        _strategy(metric="no-such-metric")


def test_reports_every_candidate() -> None:
    s = _strategy()
    for _ in range(5):
        g = s.ask()
        s.tell(g, ToyEvaluator(s.space).evaluate(g))
    rows = s.rows()
    assert [r["rank"] for r in rows] == list(range(1, 31))
    assert sum(r["top_k"] for r in rows) == 5 and sum(r["fitness"] is not None for r in rows) == 5
    assert [r["genotype"] for r in rows if r["chosen"]] == [s.space.format(s.best)]
    json.dumps(s.describe())
    assert s.table().row_count == 5


# --- NAS-Bench-201 under the benchmark protocol ---------------------------------------------
def _nb201_run(run_dir, metric: str = "eigennas_trace"):
    registry = get_registry()
    space = load_space("nb201")
    evaluator = registry.get("evaluator", "nb201-table")(space, dataset="cifar100")
    options = {**NB201, "metric": metric}
    spec = ExperimentSpec(
        space=space.name,
        strategy="eigennas",
        evaluator=evaluator.name,
        budget=Budget(trials=100),
        strategy_options=options,
        benchmark_dataset="cifar100",
    )
    strategy = EigenNas(space, objective=evaluator.objective, seed=0, registry=registry, **options)
    exp = Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False, registry=registry)
    return exp, exp.run()


@pytest.mark.slow
def test_on_nb201_validation_picks_among_the_top_k_and_test_is_reported(tmp_path) -> None:
    exp, outcome = _nb201_run(tmp_path / "run")
    strategy = exp.strategy
    top = [r.genotype for r in strategy.top]
    assert [t.genotype for t in outcome.history] == top  # exactly the top-k, best score first
    valid = {t.genotype: t.result.objectives["valid_accuracy"] for t in outcome.history}
    assert outcome.best == max(top, key=lambda g: (valid[g], -top.index(g))) == strategy.best
    assert "test_accuracy" in outcome.best_result.objectives and exp.evaluator.reported == "test_accuracy"
    rows = [json.loads(line) for line in (tmp_path / "run" / CANDIDATES_FILE).read_text().splitlines()]
    assert len(rows) == NB201["sample_size"] and sum(r["chosen"] for r in rows) == 1


@pytest.mark.slow
def test_knas_is_the_same_pipeline_with_another_metric(tmp_path) -> None:
    a, _ = _nb201_run(tmp_path / "a")
    b, knas = _nb201_run(tmp_path / "b", metric="knas")
    assert {r.genotype for r in a.strategy.ranked} == {r.genotype for r in b.strategy.ranked}
    assert [r.score for r in b.strategy.ranked] == sorted((r.score for r in b.strategy.ranked), reverse=True)
    assert (
        b.strategy.label == "knas" and b.strategy.ranked[0].score < a.strategy.ranked[0].score
    )  # MGM <= trace
    assert [t.genotype for t in knas.history] == [r.genotype for r in b.strategy.top]

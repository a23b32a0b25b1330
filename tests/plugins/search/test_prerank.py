"""The pre-ranking strategy: the top k of a training-free ranking, validated; alone it is
finished after them, with ``then`` they warm-start another strategy. The conformance kits,
on the toy space (its networks take the Gaussian batch's 3x32x32 inputs flattened)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from nasforge import api, get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.testing import ToyEvaluator, ToySpace
from nasforge.run.budget import Budget
from nasforge.run.conformance import MultiObjectiveStrategyRunConformance, StrategyRunConformance
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import RankingSettings, rank_pool, resolve_metrics, score_genotypes
from nasforge_search import LocalSearch, PreRank, RegularizedEvolution
from nasforge_search.prerank import spread_along_fronts

#: The toy networks on the Gaussian batch: 3x32x32 inputs, flattened.
TOY_BUILD = {"in_features": 3 * 32 * 32}
#: Two cheap metrics that disagree on the toy space: size, and a data-dependent one.
TOY = {"metric": "params", "top_k": 5, "cache": False, "build": TOY_BUILD, "batch_size": 8}


def _prerank(**options: Any) -> PreRank:
    space = ToySpace()
    return PreRank(space, objective=ToyEvaluator(space).objective, seed=0, **{**TOY, **options})


def _run(strategy: PreRank, n: int) -> list[Any]:
    evaluator = ToyEvaluator(ToySpace())
    asked = []
    while len(asked) < n and not strategy.finished:
        g = strategy.ask()
        asked.append(g)
        strategy.tell(g, evaluator.evaluate(g))
    return asked


class TestPreRank(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return PreRank

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return dict(TOY)


class TestPreRankWarmStartingEvolution(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return PreRank

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {**TOY, "then": "rea", "then_options": {"population_size": 6, "sample_size": 2}}


class TestPreRankWarmStartingLocalSearch(StrategyRunConformance):
    @pytest.fixture
    def strategy_cls(self):
        return PreRank

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {**TOY, "metric": ["params", "synflow"], "then": "local"}


@pytest.mark.slow
def test_asks_the_top_k_of_the_metric_in_order_then_is_finished() -> None:
    space = ToySpace()
    table = score_genotypes(
        space, list(space.enumerate()), ["synflow"], batch_size=8, build=TOY_BUILD, seed=0
    )
    strategy = _prerank(metric="synflow", top_k=4)
    asked = _run(strategy, 50)
    assert asked == table.ranking("synflow")[:4], "the ranking is the scorer's, best first"
    assert strategy.finished and len(asked) == 4


def test_a_run_ends_after_k_trials_with_the_best_by_the_evaluator() -> None:
    space, evaluator = ToySpace(), ToyEvaluator(ToySpace())
    spec = ExperimentSpec(
        space="toy",
        strategy="prerank",
        evaluator="toy",
        budget=Budget(trials=30),
        strategy_options=TOY,
    )
    strategy = PreRank(space, objective=evaluator.objective, seed=0, **TOY)
    outcome = Experiment(space, strategy, evaluator, spec, progress=False).run()
    assert len(outcome.history) == 5
    best = max(outcome.history, key=lambda t: t.result.objectives["score"])
    assert outcome.best == best.genotype == strategy.best


def test_several_metrics_or_seeds_rank_by_the_mean_normalised_rank() -> None:
    space = ToySpace()
    pool = list(space.enumerate())
    settings = RankingSettings(metrics=["params", "synflow"], seeds=[0, 1], batch_size=8, build=TOY_BUILD)
    ranking = rank_pool(space, pool, settings, cache=False)
    assert list(ranking.columns) == ["params@0", "synflow@0", "params@1", "synflow@1"]
    from nasforge.tools.scoring import aggregate_ranks

    by_genotype = {}
    for seed in (0, 1):
        table = score_genotypes(space, pool, ["params", "synflow"], batch_size=8, build=TOY_BUILD, seed=seed)
        by_genotype[seed] = table
    columns = [by_genotype[s].values(m) for s in (0, 1) for m in ("params", "synflow")]
    expected = aggregate_ranks(columns, [True] * 4)
    order = sorted(range(len(pool)), key=lambda i: (-expected[i], i))
    assert list(ranking.genotypes) == [pool[i] for i in order]
    assert ranking.scores == tuple(float(expected[i]) for i in order)


def test_a_warm_start_tells_evolution_the_top_k_best_first() -> None:
    strategy = _prerank(top_k=4, then="rea", then_options={"population_size": 6, "sample_size": 2})
    _run(strategy, 4)
    inner = strategy.then
    assert isinstance(inner, RegularizedEvolution)
    members = [g for g, _ in inner.population]
    assert sorted(members, key=str) == sorted(strategy.top, key=str), "its first population"
    ranks = [rank for _, rank in inner.population]
    assert ranks == sorted(ranks, reverse=True), "told best first"
    assert not strategy.finished
    _run(strategy, 3)
    assert len(inner.population) == 6  # then evolution goes on by itself


def test_a_warm_start_puts_local_search_at_the_best_of_the_top_k() -> None:
    strategy = _prerank(top_k=5, then="local")
    asked = _run(strategy, 5)
    inner = strategy.then
    assert isinstance(inner, LocalSearch) and inner.incumbent is not None
    evaluator = ToyEvaluator(ToySpace())
    best = max(asked, key=lambda g: (evaluator.evaluate(g).objectives["score"], -asked.index(g)))
    assert inner.incumbent[0] == best
    assert strategy.ask() in ToySpace().neighbours(best), "its first own ask is a neighbour of it"


def test_the_run_hands_its_executor_to_the_ranking(tmp_path) -> None:
    """`--executor process --workers 2` reaches a strategy that scores a pool."""
    spec = ExperimentSpec(
        space="nb201",
        strategy="prerank",
        evaluator="nb201-table",
        budget=Budget(trials=3),
        executor="process",
        workers=2,
        strategy_options={"metric": "params", "top_k": 3, "pool": 5, "cache": False},
    )
    from nasforge.kernel.registry import get_registry

    _space, _evaluator, strategy, executor = spec.build(get_registry())
    executor.close()
    assert strategy.parallelism == Parallelism("process", 2)
    assert strategy.then is None


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"metric": "no-such-metric"}, "no-such-metric"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 6, "pool": 5}, "top_k"),
        ({"then": "prerank"}, "itself"),
        ({"then_options": {"population_size": 4}}, "then"),
        ({"init_seeds": []}, "init_seeds"),
        ({"labels": "sometimes"}, "labels"),
    ],
)
def test_bad_options_are_one_line(options: dict[str, Any], needle: str) -> None:
    with pytest.raises(NasforgeError, match=needle) as info:
        _prerank(**options)
    assert "\n" not in str(info.value)


def test_bad_options_from_the_cli_exit_2_in_one_line(cli) -> None:
    run = cli("search", "--strategy", "prerank", "-o", "metric=no-such-metric", "--budget-trials", "3")
    run.assert_one_line_error("no-such-metric")


class TestPreRankWarmStartingNSGA2(MultiObjectiveStrategyRunConformance):
    """Several objectives: NSGA-II's first generation includes the validated top k."""

    @pytest.fixture
    def strategy_cls(self):
        return PreRank

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {**TOY, "then": "nsga2", "then_options": {"population_size": 6}}


@pytest.mark.slow
def test_several_objectives_are_searched_as_then_searches_them() -> None:
    goal = SearchGoal.of(["score:max", "size:min"])
    alone = PreRank(ToySpace(), objective=goal, seed=0, **TOY)
    assert len(_run(alone, 100)) == TOY["top_k"] and alone.finished, "alone: the top k, then finished"
    warm = PreRank(ToySpace(), objective=goal, seed=0, then="nsga2", **TOY)
    asked = _run(warm, 30)
    assert asked[: TOY["top_k"]] == warm.top and len(asked) == 30
    with pytest.raises(NasforgeError, match="'rea' optimises one objective") as info:
        PreRank(ToySpace(), objective=goal, seed=0, then="rea", **TOY)
    assert "\n" not in str(info.value)


def test_several_objectives_without_a_cost_metric_say_how_to_spread_the_top_k(caplog) -> None:
    goal = SearchGoal.of(["score:max", "size:min"])
    with caplog.at_level(logging.INFO, logger="nasforge.prerank"):
        PreRank(ToySpace(), objective=goal, seed=0, **TOY)
    assert "cost_metric=flops" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="nasforge.prerank"):
        PreRank(ToySpace(), objective=goal, seed=0, **{**TOY, "cost_metric": "params"})
        _prerank()  # one objective: nothing to spread along
    assert "cost_metric" not in caplog.text


def test_a_warm_started_two_objective_run_from_the_api() -> None:
    outcome = api.search(
        "toy", "prerank", "toy", trials=20, seed=0, objectives=["score:max", "size:min"],
        strategy_options={**TOY, "then": "nsga2", "then_options": {"population_size": 6}},
    )  # fmt: skip
    assert len(outcome.history) == 20 and outcome.front
    with pytest.raises(NasforgeError, match="rea"):
        api.search(
            "toy", "prerank", "toy", trials=20, seed=0, objectives=["score:max", "size:min"],
            strategy_options={**TOY, "then": "rea"},
        )  # fmt: skip


def test_on_nb201_the_top_k_are_the_pool_s_best_and_the_search_reports_test_accuracy() -> None:
    """A pool of 40 cells (drawn from the seed) by params; the run's choice is the best by
    validation among the top 5, reported with its test accuracy (the protocol)."""
    options = {"metric": "params", "top_k": 5, "pool": 40, "cache": False, "build": {"C": 4, "N": 1}}
    out = api.search("nb201", "prerank", "nb201-table", trials=20, seed=3, strategy_options=options)
    assert len(out.history) == 5
    valid = [t.result.objectives["valid_accuracy"] for t in out.history]
    assert out.best_result is not None and out.best_result.objectives["valid_accuracy"] == max(valid)
    assert "test_accuracy" in out.best_result.objectives


def test_spread_along_fronts_takes_whole_fronts_then_evenly_along_the_next() -> None:
    # front 0: (5, 0), (4, 1), (3, 2), (2, 3), (1, 4); front 1: (4, 0), (2, 2); then (0, 0)
    points = [(5, 0), (4, 1), (3, 2), (2, 3), (1, 4), (4, 0), (2, 2), (0, 0)]
    assert spread_along_fronts(points, 3) == [0, 2, 4]  # both ends and the middle of front 0
    assert spread_along_fronts(points, 1) == [0]  # the best-scoring end
    assert spread_along_fronts(points, 6) == [0, 1, 2, 3, 4, 5]  # front 0 whole, best first
    assert spread_along_fronts(points, 8) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert spread_along_fronts(points, 20) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_a_cost_metric_spreads_the_top_k_along_the_trade_off() -> None:
    """By synflow alone the top k are the pool's largest networks; with params as the cost
    they span the sizes, from the best-scoring end to the smallest of the first front."""
    options = {"metric": "synflow", "top_k": 4, "pool": 60, "cache": False, "build": {"C": 4, "N": 1}}
    goal = SearchGoal.of(["valid_accuracy:max", "latency_ms:min"])
    space = get_registry().space("nb201")
    plain = PreRank(space, objective=goal, seed=1, **options)
    spread = PreRank(space, objective=goal, seed=1, cost_metric="params", **options)
    members = list(plain.ranked().genotypes)
    sizes = score_genotypes(space, members, resolve_metrics(["params"]), build={"C": 4, "N": 1}, cache=None)
    size = dict(zip(members, (s.value for s in sizes.column("params")), strict=True))
    assert spread.top[0] == plain.top[0]  # the best-scoring end of the first front
    assert min(size[g] for g in spread.top) == min(size.values())  # the cheapest end too
    assert min(size[g] for g in spread.top) < min(size[g] for g in plain.top)
    assert spread.describe()["cost_metric"] == "params" and len(spread.describe()["top"]) == 4
    with pytest.raises(NasforgeError, match="no-such-cost"):
        PreRank(space, objective=goal, seed=1, cost_metric="no-such-cost", **options)

"""Pools ranked for strategies: through the shared score cache that ``nasforge score`` and
``correlate`` fill, on the run's executor, and the same whatever runs them; and pools of
Eigen-NAS and HNAS scored the same way."""

from __future__ import annotations

import json
import random

import pytest

from nasforge.api import load_space
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.parallelism import Parallelism
from nasforge.tools.scoring import (
    InProcessSweep,
    RankingSettings,
    ScoreCache,
    ScoreKey,
    rank_pool,
    sample_genotypes,
    score_genotypes,
    sweep_for,
)
from nasforge.tools.scoring.cache import space_config
from nasforge_eigennas import EigenNas, MLPResSpace
from nasforge_hnas import Hnas
from nasforge_hnas.shared_cache import SharedPoolCache

SMALL = {"C": 4, "N": 1}


def test_a_ranking_reads_the_scores_nasforge_score_left_in_the_cache(cli, tmp_path) -> None:
    """``correlate --all`` (or ``score``) then a search: the search computes nothing."""
    cache = tmp_path / "cache"
    cli("score", "--space", "nb201", "--sample", "6", "-m", "synflow", "--build-option", "C=4",
        "--build-option", "N=1", "--cache", cache, "-q", "--json", ok=True)  # fmt: skip
    space = load_space("nb201")
    pool = sample_genotypes(space, 6, seed=0)
    settings = RankingSettings(metrics=["synflow"], build=SMALL)
    ranking = rank_pool(space, pool, settings, cache=cache)
    assert ranking.computed == 0, "every score came from the cache the CLI filled"
    fresh = rank_pool(space, pool, settings, cache=False)
    assert fresh.computed == 6
    assert ranking.genotypes == fresh.genotypes and ranking.columns == fresh.columns


@pytest.mark.slow
def test_a_pool_is_ranked_alike_on_a_process_pool_and_in_process(tmp_path) -> None:
    space = load_space("nb201")
    pool = sample_genotypes(space, 8, seed=1)
    settings = RankingSettings(metrics=["synflow", "params"], build=SMALL, batch_size=4)
    here = rank_pool(space, pool, settings, cache=False)
    there = rank_pool(space, pool, settings, cache=False, parallelism=Parallelism("process", 2))
    assert there.genotypes == here.genotypes and there.columns == here.columns


@pytest.mark.slow
def test_workers_start_only_for_what_is_not_cached(tmp_path) -> None:
    space = load_space("nb201")
    pool = sample_genotypes(space, 3, seed=2)
    cache = ScoreCache(tmp_path)
    score_genotypes(space, pool, ["params"], build=SMALL, cache=cache)
    runner = sweep_for(Parallelism("process", 2))
    try:
        score_genotypes(space, pool, ["params"], build=SMALL, cache=cache, executor=runner)
        assert runner._runner is None, "a fully cached sweep spawns no process"  # type: ignore[attr-defined]
        score_genotypes(space, pool, ["params"], build={"C": 2, "N": 1}, cache=cache, executor=runner)
        assert runner._runner is not None  # type: ignore[attr-defined]
    finally:
        runner.close()
    assert isinstance(sweep_for(None), InProcessSweep)
    assert isinstance(sweep_for(Parallelism()), InProcessSweep)


@pytest.mark.slow
def test_a_space_s_own_options_key_its_scores(tmp_path) -> None:
    """mlp-res with another LeakyReLU slope builds other networks: not served the default's
    scores; a space without options keys as it always did (old caches stay valid)."""
    cache = ScoreCache(tmp_path)
    options = {"batch_size": 4, "data": "digits", "build": {"width": 8}}
    default, tilted = MLPResSpace(depth=3), MLPResSpace(depth=3, leaky_slope=0.3)
    pool = list(default.enumerate())[:4]
    first = score_genotypes(default, pool, ["synflow"], cache=cache, **options)
    again = score_genotypes(default, pool, ["synflow"], cache=cache, **options)
    other = score_genotypes(tilted, pool, ["synflow"], cache=cache, **options)
    assert all(s.cached for s in again.column("synflow"))
    assert not any(s.cached for s in other.column("synflow"))
    assert [s.value for s in first.column("synflow")] == [s.value for s in again.column("synflow")]
    assert space_config(load_space("nb201")) == "" and space_config(default) != space_config(tilted)
    nb201_shards = {p.name for p in tmp_path.glob("*.jsonl")}
    score_genotypes(load_space("nb201"), sample_genotypes(load_space("nb201"), 1), ["params"], build=SMALL,
                    cache=cache)  # fmt: skip
    new = {p.name for p in tmp_path.glob("*.jsonl")} - nb201_shards
    before = json.dumps({"device": "cpu", "loss": "cross_entropy"}, sort_keys=True)
    key = ScoreKey("params", 0, "shape:3x32x32", json.dumps(SMALL, sort_keys=True), settings=before)
    assert new == {key.shard()}, "an option-free space's key is the one it always had"


@pytest.mark.slow
def test_eigennas_scores_its_pool_on_the_run_s_executor_into_the_shared_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    space = load_space("nb201")
    options = {"sample_size": 6, "top_k": 2, "batch_size": 4, "input_shape": [3, 8, 8], "build": SMALL}
    options["score_data"] = "gaussian"  # data-agnostic: a table run has no training data
    goal = SearchGoal.of(["valid_accuracy:max"])
    here = EigenNas(space, objective=goal, seed=0, **options)
    ranked = here.score_pool()
    assert any((tmp_path / "nasforge" / "scores").glob("*.jsonl")), "the shared cache, by default"
    there = EigenNas(
        space, objective=goal, seed=0, parallelism=Parallelism("process", 2), **options, cache=False
    )
    assert [(r.genotype, r.score) for r in there.score_pool()] == [(r.genotype, r.score) for r in ranked]


@pytest.mark.slow
@pytest.mark.parametrize("where", [None, Parallelism("process", 2)])
def test_hnas_keeps_its_pool_in_the_shared_cache(tmp_path, monkeypatch, where) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    space = load_space("nb201")
    options = {"steps": 3, "pool_size": 5, "batch_size": 4, "input_shape": [3, 8, 8], "build": SMALL}
    goal = SearchGoal.of(["valid_accuracy:max"])
    first = Hnas(space, objective=goal, seed=0, parallelism=where, **options)
    first.ask()
    cache = first.scorer.cache
    assert isinstance(cache, SharedPoolCache)
    texts = [space.format(g) for g in first.pool.genotypes]
    again = SharedPoolCache(space, ScoreCache(tmp_path / "nasforge" / "scores"))
    stored = [again.get(first.scorer.key, t) for t in texts]
    assert all(s is not None for s in stored), "flushed to disk after the fill"
    assert [s.kappa for s in stored] == pytest.approx(list(first.pool.kappa), nan_ok=True)
    second = Hnas(space, objective=goal, seed=0, **options)
    second.ask()
    assert list(second.pool.metric) == pytest.approx(list(first.pool.metric), nan_ok=True)


def test_a_space_s_key_is_its_attributes_alone() -> None:
    """The options a space keeps as a record of how it was made add nothing to its score
    key: a space without options keys as "", one with options by its attributes, as the
    caches written before that record was kept were keyed."""
    tilted = MLPResSpace(depth=3, leaky_slope=0.3)
    attributes = {k: v for k, v in vars(tilted).items() if not k.startswith("_space")}
    assert space_config(load_space("nb201")) == ""
    assert space_config(tilted) == json.dumps(attributes, sort_keys=True, default=repr)
    assert "leaky_slope=0.3" in space_config(tilted) and "_space_options" not in space_config(tilted)


def test_a_declared_space_keys_the_same_before_and_after_its_declaration_is_read() -> None:
    """The declaration a declared space reads on first use is cached on the object: not part
    of its key, or its first scores and its later ones would be kept apart."""
    from nasforge.kernel.testing.toy import ToySpace

    space = ToySpace()
    fresh = space_config(space)
    assert "declaration" not in vars(space)
    space.sample(random.Random(0))
    assert "declaration" in vars(space)
    assert space_config(space) == fresh == space_config(ToySpace())

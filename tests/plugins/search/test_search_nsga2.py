"""NSGA-II's own parts: survival by fronts and crowding, Deb's constraint rules in selection
and tournaments, its options; and that it beats random search on the table's front."""

from __future__ import annotations

import random
import statistics

import numpy as np
import pytest

from nasforge import api
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.pareto import hypervolume
from nasforge.kernel.result import Result
from nasforge.kernel.testing import ToySpace
from nasforge_search import NSGA2


def _strategy(population: int = 4, constraints=()) -> NSGA2:
    goal = SearchGoal.of(["a:max", "b:max"], constraints)
    return NSGA2(ToySpace(), objective=goal, seed=0, population_size=population)


def _tell(strategy: NSGA2, points: list[tuple[float, float]]) -> None:
    space = ToySpace()
    genotypes = list(space.enumerate())
    for g, (a, b) in zip(genotypes, points, strict=False):
        strategy.tell(g, Result(objectives={"a": a, "b": b}))


def _survivors(strategy: NSGA2) -> list[tuple[float, ...]]:
    return [member.vector for member, _ in strategy.parents]


def test_the_first_generation_is_random_then_parents_breed() -> None:
    s = _strategy(population=4)
    asked = [s.ask() for _ in range(6)]
    assert not s.parents and len(set(asked)) > 1  # no parents yet: samples
    _tell(s, [(1, 1), (2, 2), (3, 0), (0, 3)])
    assert len(s.parents) == 4 and not s.offspring
    parents = {m.genotype for m, _ in s.parents}
    child = s.ask()
    assert any(child in ToySpace().neighbours(p) for p in parents), "a child is a parent's mutation"


def test_survival_keeps_whole_fronts_then_the_most_spread() -> None:
    s = _strategy(population=4)
    # first front: (0,4) (1,3) (2,2) (3,1) (4,0) -- five members for four places; then dominated ones
    _tell(s, [(0, 4), (1, 3), (2, 2), (3, 1), (4, 0), (0, 0), (1, 1), (0.5, 0.5)])
    survivors = _survivors(s)
    assert len(survivors) == 4 and all(v in {(0, 4), (1, 3), (2, 2), (3, 1), (4, 0)} for v in survivors)
    assert (0, 4) in survivors and (4, 0) in survivors, "a front keeps its extremes (infinite crowding)"


def test_constraints_rank_feasible_first_then_by_violation() -> None:
    s = _strategy(population=4, constraints=["a<=2"])
    _tell(s, [(9, 9), (3, 0), (2, 0), (1, 1), (2.5, 5), (0, 0), (8, 8), (7, 1)])
    survivors = _survivors(s)
    assert (2, 0) in survivors and (1, 1) in survivors and (0, 0) in survivors  # the feasible ones
    assert (2.5, 5) in survivors, "then the least infeasible (a = 2.5 beats 3, 7, 8, 9)"
    keys = {m.vector: key for m, key in s.parents}
    assert keys[(2.5, 5)] > max(keys[v] for v in [(2, 0), (1, 1), (0, 0)])  # loses every tournament


def test_tournaments_prefer_lower_fronts() -> None:
    s = _strategy(population=4)
    _tell(s, [(3, 3), (0, 0), (1, 0), (0, 1)])
    winners = []
    for _ in range(200):
        k = s.rng.sample(range(len(s.parents)), 2)
        winners.append(s.parents[min(k, key=lambda i: (s.parents[i][1], i))][0].vector)
    assert winners.count((3, 3)) > winners.count((0, 0))
    assert (0, 0) not in winners, "the only member of the last front never wins a binary tournament"


def test_duplicates_count_once() -> None:
    s = _strategy(population=2)
    g = next(iter(ToySpace().enumerate()))
    for _ in range(2):
        s.tell(g, Result(objectives={"a": 1.0, "b": 1.0}))
    assert len(s.parents) == 1


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("population_size=1", "population_size >= 2"),
        ("tournament_size=1", "2 <= tournament_size <= population_size"),
        ("tournament_size=11", "2 <= tournament_size <= population_size"),
        ("population_size=ten", "expects an integer"),
    ],
)
def test_bad_options_are_one_line(cli, tmp_path, option, needle) -> None:
    cli(
        "search",
        "--strategy",
        "nsga2",
        "--objective",
        "valid_accuracy:max",
        "--objective",
        "latency_ms:min",
        "-o",
        option,
        "--budget-trials",
        "5",
        "-q",
        "--run-dir",
        tmp_path / "r",
    ).assert_one_line_error(needle)


def _normalised_hypervolume(strategy: str, seed: int) -> float:
    out = api.search(
        "nb201", strategy, objectives=["valid_accuracy:max", "latency_ms:min"], trials=150, seed=seed
    )
    points = np.array(
        [[t.result.objectives["valid_accuracy"], t.result.objectives["latency_ms"]] for t in out.front]
    )
    # a fixed box around the region that matters: accuracy 80..92 %, latency 7..21 ms
    scaled = np.column_stack([(92 - points[:, 0]) / 12, (points[:, 1] - 7) / 14])
    return hypervolume(scaled, [1.0, 1.0], [False, False])


@pytest.mark.slow
def test_nsga2_finds_a_better_front_than_random_search_on_the_table() -> None:
    """A sanity check of the search itself (the benchmark measures it properly, over 10 seeds)."""
    seeds = range(4)
    nsga = statistics.fmean(_normalised_hypervolume("nsga2", s) for s in seeds)
    rand = statistics.fmean(_normalised_hypervolume("mo-random", s) for s in seeds)
    assert nsga > rand


def test_nsga2_asks_depend_only_on_seed_and_results() -> None:
    """Replay needs it: two strategies told the same results ask the same genotypes, and the
    process-wide random generator plays no part."""

    def drive() -> list:
        s = _strategy(population=3)
        asked = []
        for i in range(20):
            random.seed(i)  # noise in the global generator must change nothing
            g = s.ask()
            asked.append(g)
            s.tell(g, Result(objectives={"a": float(len(set(g.choices))), "b": float(i % 3)}))
        return asked

    assert drive() == drive()

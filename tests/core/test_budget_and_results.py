from __future__ import annotations

import math

import pytest

from nasforge import Budget, BudgetError, Objective, Result


@pytest.mark.parametrize("kwargs", [{"trials": 0}, {"seconds": 0}, {"simulated_seconds": -1.0}, {}])
def test_bad_budgets_are_refused(kwargs: dict) -> None:
    with pytest.raises(BudgetError):
        Budget(**kwargs)


def test_budget_exhaustion_any_limit() -> None:
    b = Budget(trials=10, simulated_seconds=100.0)
    assert not b.exhausted(trials=9, seconds=1e9, simulated_seconds=99.0)
    assert b.exhausted(trials=10, seconds=0, simulated_seconds=0)
    assert b.exhausted(trials=0, seconds=0, simulated_seconds=100.0)
    assert Budget.from_json(b.to_json()) == b


def test_objective_fitness_direction_and_failures() -> None:
    up, down = Objective("acc"), Objective("loss", higher_is_better=False)
    r = Result(objectives={"acc": 0.9, "loss": 0.3})
    assert up.fitness(r) == 0.9
    assert down.fitness(r) == -0.3
    assert up.fitness(Result(objectives={}, failed=True, error="x")) == -math.inf
    assert up.fitness(Result(objectives={"acc": math.nan})) == -math.inf


def test_result_validates_cost() -> None:
    with pytest.raises(ValueError):
        Result(objectives={"a": 1.0}, cost=-1)
    r = Result(objectives={"a": 1.0}, cost=2, metadata={"k": "v"})
    assert Result.from_json(r.to_json()) == r

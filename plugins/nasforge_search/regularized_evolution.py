"""Regularized evolution (aging evolution; Real et al., 2019).

A tournament of ``sample_size`` members picks a parent, its mutation joins the
population and the *oldest* member leaves. Ageing out good but old members keeps the
search exploring instead of collapsing around one early lucky architecture.
Defaults (population 20, tournament 5) were chosen on NAS-Bench-201 CIFAR-10 and are
reported with the REA benchmark in ``benchmarks/rea_vs_random.py``.

Members compare by :meth:`~nasforge.Strategy.rank`, so under constraints a feasible
member wins every tournament against an infeasible one, and among infeasible ones the
nearer to feasible wins: evolution steers into the feasible region instead of drifting.
"""

from __future__ import annotations

import collections

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.errors import OptionError
from nasforge.kernel.option_types import MAX_COUNT, check_option
from nasforge.kernel.search_space import MUTATE, SAMPLE


class RegularizedEvolution(Strategy):
    """Regularized (aging) evolution: tournament selection, mutation, oldest member dies."""

    name = "rea"
    requires = frozenset({SAMPLE, MUTATE})

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        population_size: int = 20,
        sample_size: int = 5,
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        check_option("population_size", population_size, int)
        check_option("sample_size", sample_size, int)
        if not 2 <= population_size <= MAX_COUNT or not 1 <= sample_size <= population_size:
            raise OptionError(
                f"rea needs population_size >= 2 (at most {MAX_COUNT}) and "
                f"1 <= sample_size <= population_size, "
                f"got {population_size} and {sample_size}"
            )
        self.population_size = population_size
        self.sample_size = sample_size
        self.population: collections.deque[tuple[Genotype, tuple[float, ...]]] = collections.deque(
            maxlen=population_size
        )

    def ask(self) -> Genotype:
        if len(self.population) < self.population_size:
            return self.space.sample(self.rng)
        contenders = self.rng.sample(list(self.population), self.sample_size)
        parent = max(contenders, key=lambda member: member[1])[0]
        return self.space.mutate(parent, self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        self.population.append((g, self.rank(result)))  # deque drops the oldest

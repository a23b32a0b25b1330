"""NSGA-II (Deb et al., 2002) for architectures, with mutation as the only variation.

A population of ``population_size`` parents breeds offspring one ask at a time: a
tournament of ``tournament_size`` parents picks the one of lowest front rank (largest
crowding distance on ties) and the space mutates it, as regularized evolution does (a
search space declares no crossover). Once as many offspring as parents have been told,
parents and offspring are ranked together by non-dominated sorting and the best fronts
survive, the last one thinned by crowding distance so the front stays spread out.

Constraints follow Deb's constrained domination: a feasible member beats an infeasible
one, a smaller violation beats a larger one, and feasible members compare by Pareto
dominance. The first ``population_size`` asks are random samples.

Defaults (population 10, binary tournaments) were chosen on NAS-Bench-201 CIFAR-100 and
ImageNet16-120 (200 queries, validation accuracy against latency), never on the CIFAR-10
numbers ``benchmarks/multiobjective_nb201.py`` reports; populations of 6 to 20 were within
noise of each other there.

Resume is replay: everything here is a function of the seed, the options and the
sequence of results told, so the same journal rebuilds the same population.
"""

from __future__ import annotations

import attrs

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.errors import OptionError
from nasforge.kernel.option_types import MAX_COUNT, check_option
from nasforge.kernel.pareto import crowding_distance, non_dominated_sort
from nasforge.kernel.search_space import MUTATE, SAMPLE


@attrs.frozen
class _Member:
    genotype: Genotype
    #: each objective's fitness (larger is better)
    vector: tuple[float, ...]
    #: 0 when feasible (see SearchGoal.violation)
    violation: float


class NSGA2(Strategy):
    """NSGA-II: non-dominated sorting, crowding distance, tournament selection, mutation."""

    name = "nsga2"
    requires = frozenset({SAMPLE, MUTATE})
    multi_objective = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        population_size: int = 10,
        tournament_size: int = 2,
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        check_option("population_size", population_size, int)
        check_option("tournament_size", tournament_size, int)
        if not 2 <= population_size <= MAX_COUNT or not 2 <= tournament_size <= population_size:
            raise OptionError(
                f"nsga2 needs population_size >= 2 (at most {MAX_COUNT}) and "
                f"2 <= tournament_size <= population_size, got {population_size} and {tournament_size}"
            )
        self.population_size = population_size
        self.tournament_size = tournament_size
        #: The surviving population, each with its tournament key (lower is better).
        self.parents: list[tuple[_Member, tuple[float, ...]]] = []
        #: Members told since the last selection (the first generation: random samples).
        self.offspring: list[_Member] = []

    def ask(self) -> Genotype:
        if not self.parents:
            return self.space.sample(self.rng)
        k = min(self.tournament_size, len(self.parents))
        contenders = self.rng.sample(range(len(self.parents)), k)
        winner = min(contenders, key=lambda i: (self.parents[i][1], i))
        return self.space.mutate(self.parents[winner][0].genotype, self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        self.offspring.append(_Member(g, self.goal.vector(result), self.goal.violation(result)))
        if len(self.offspring) >= self.population_size:
            pool = [m for m, _ in self.parents] + self.offspring
            self.parents = self._survivors(pool)
            self.offspring = []

    # --- selection ----------------------------------------------------------------------
    def _survivors(self, pool: list[_Member]) -> list[tuple[_Member, tuple[float, ...]]]:
        """The next parents: whole fronts in rank order, the last cut by crowding distance,
        then the least infeasible; each with its tournament key."""
        unique: dict[Genotype, _Member] = {}
        for member in pool:  # a genotype told twice (a duplicate ask) counts once
            unique.setdefault(member.genotype, member)
        members = list(unique.values())
        feasible = [m for m in members if m.violation == 0.0]
        infeasible = sorted((m for m in members if m.violation > 0.0), key=lambda m: m.violation)
        chosen: list[_Member] = []
        for front in self._fronts(feasible):
            room = self.population_size - len(chosen)
            if room <= 0:
                break
            if len(front) > room:
                distance = crowding_distance([m.vector for m in front])
                order = sorted(range(len(front)), key=lambda i: (-distance[i], i))
                front = [front[i] for i in order[:room]]
            chosen.extend(front)
        chosen.extend(infeasible[: self.population_size - len(chosen)])
        return self._with_keys(chosen)

    def _fronts(self, members: list[_Member]) -> list[list[_Member]]:
        if not members:
            return []
        ranks = non_dominated_sort([m.vector for m in members], self.goal.maximize)
        return [
            [m for m, r in zip(members, ranks, strict=True) if r == rank]
            for rank in range(int(ranks.max()) + 1)
        ]

    def _with_keys(self, chosen: list[_Member]) -> list[tuple[_Member, tuple[float, ...]]]:
        """Tournament keys (lower wins): feasible by (front rank, -crowding), then
        infeasible by violation."""
        keyed: list[tuple[_Member, tuple[float, ...]]] = []
        for rank, front in enumerate(self._fronts([m for m in chosen if m.violation == 0.0])):
            distance = crowding_distance([m.vector for m in front])
            keyed.extend((m, (0.0, float(rank), -float(d))) for m, d in zip(front, distance, strict=True))
        keyed.extend((m, (1.0, m.violation, 0.0)) for m in chosen if m.violation > 0.0)
        return keyed

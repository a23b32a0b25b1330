"""Regularized evolution (aging evolution; Real et al., 2019).

A tournament of ``sample_size`` members picks a parent, its mutation joins the
population and the *oldest* member leaves. Ageing out good but old members keeps the
search exploring instead of collapsing around one early lucky architecture.
Defaults (population 20, tournament 5) were chosen on NAS-Bench-201 CIFAR-10 and are
reported with the REA benchmark in ``benchmarks/rea_vs_random.py``.

Members compare by :meth:`~nasforge.Strategy.rank`, so under constraints a feasible
member wins every tournament against an infeasible one, and among infeasible ones the
nearer to feasible wins: evolution steers into the feasible region instead of drifting.

On a long budget the population closes in on cells it has already evaluated: every
mutation of its members was seen, the run answers each repeat from its record, and the
search only repeats itself (on NAS-Bench-201 it slowed from ~190 to ~5 trials/s and gave
up at a third of the space). Once ``population_size`` asks in a row were repeats, an ask
walks on from the mutated child (one more mutation at a time), then samples the space,
and in a space it can list (at most :data:`LISTED_AT_MOST` cells) picks one of the cells
it was never told of (and once walking and sampling have both failed, every later ask
whose child was seen draws from those at once), so the run keeps finding new cells while
any remain. Before such a streak (at the budgets of the paper's protocol) nothing changes.
"""

from __future__ import annotations

import collections

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.errors import OptionError
from nasforge.kernel.option_types import MAX_COUNT, check_option
from nasforge.kernel.search_space import ENUMERATE, MUTATE, SAMPLE

#: Further mutations, then fresh samples, an ask tries for an unseen cell once the
#: population only repeats itself.
ESCAPE_TRIES = 200
#: The largest space whose unseen cells an ask lists when walking and sampling found none.
LISTED_AT_MOST = 1_000_000


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
        #: Every genotype told so far, and how many tells in a row were of one told before.
        self.told: set[Genotype] = set()
        self.repeats = 0
        #: The cells not told of when walking and sampling first found none (see _unseen).
        self._untold: list[Genotype] | None = None

    def ask(self) -> Genotype:
        if len(self.population) < self.population_size:
            return self.space.sample(self.rng)
        contenders = self.rng.sample(list(self.population), self.sample_size)
        parent = max(contenders, key=lambda member: member[1])[0]
        child = self.space.mutate(parent, self.rng)
        if child not in self.told or (self.repeats < self.population_size and self._untold is None):
            return child
        return self._unseen(child)  # at once, where the space is all but seen (see _unseen)

    def _unseen(self, child: Genotype) -> Genotype:
        """A cell never told of: found by walking on from ``child``, else by sampling, else
        (in a space it can list) drawn from the cells never told of; the last child when
        none is left (the run answers it from its record). Once walking and sampling have
        both failed, the space is all but seen, and a later ask whose child was seen draws
        from the list at once, with no streak of repeats first (the streak and 400 failing
        tries an ask made the last thousand cells of NAS-Bench-201 run at a tenth of the
        first thousand's rate)."""
        if self._untold is None:
            for _ in range(ESCAPE_TRIES):
                child = self.space.mutate(child, self.rng)
                if child not in self.told:
                    return child
            for _ in range(ESCAPE_TRIES):
                drawn = self.space.sample(self.rng)
                if drawn not in self.told:
                    return drawn
            size = self.space.size
            if ENUMERATE not in self.space.capabilities or size is None or size > LISTED_AT_MOST:
                return child
            self._untold = [g for g in self.space.enumerate() if g not in self.told]
        return self._draw_untold() or child

    def _draw_untold(self) -> Genotype | None:
        """A uniform draw from the listed cells still not told of (those told since the list
        was made are dropped as they are met), or None when every cell was told of."""
        untold = self._untold or []
        while untold:
            i = self.rng.randrange(len(untold))
            if untold[i] not in self.told:
                return untold[i]
            untold[i] = untold[-1]
            untold.pop()
        return None

    def tell(self, g: Genotype, result: Result) -> None:
        self.repeats = self.repeats + 1 if g in self.told else 0
        self.told.add(g)
        self.population.append((g, self.rank(result)))  # deque drops the oldest

"""Best-improvement local search with random restarts.

Evaluates every neighbour of the incumbent (in a shuffled order), moves to the best one
if it improves, and restarts from a random architecture at a local optimum. On
NAS-Bench-201 this is a strong baseline (White et al., 2021) and needs only
``neighbours``, no mutation distribution. Results compare by
:meth:`~nasforge.Strategy.rank`: under constraints a move towards the feasible region
improves, and a feasible incumbent is never left for an infeasible neighbour.
"""

from __future__ import annotations

import collections

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.search_space import NEIGHBOURS, SAMPLE


class LocalSearch(Strategy):
    """Best-improvement local search over neighbours, restarting at local optima."""

    name = "local"
    requires = frozenset({SAMPLE, NEIGHBOURS})

    def __init__(self, space: SearchSpace, *, objective: Objective, seed: int = 0) -> None:
        super().__init__(space, objective=objective, seed=seed)
        self.incumbent: tuple[Genotype, tuple[float, ...]] | None = None
        self.queue: collections.deque[Genotype] = collections.deque()
        self.round_best: tuple[Genotype, tuple[float, ...]] | None = None
        self.pending = 0

    def ask(self) -> Genotype:
        if self.incumbent is None or (not self.queue and self.pending == 0 and self._restart()):
            self.pending += 1
            return self.space.sample(self.rng)
        if not self.queue:  # neighbours still being evaluated elsewhere: explore randomly
            return self.space.sample(self.rng)
        self.pending += 1
        return self.queue.popleft()

    def _restart(self) -> bool:
        """Called when a neighbourhood is done: move, or restart if nothing improved."""
        assert self.incumbent is not None
        if self.round_best is not None and self.round_best[1] > self.incumbent[1]:
            self._set_incumbent(*self.round_best)
            return False
        self.incumbent = None
        return True

    def _set_incumbent(self, g: Genotype, fitness: tuple[float, ...]) -> None:
        self.incumbent = (g, fitness)
        self.round_best = None
        neighbours = self.space.neighbours(g)
        self.rng.shuffle(neighbours)
        self.queue = collections.deque(neighbours)

    def tell(self, g: Genotype, result: Result) -> None:
        fitness = self.rank(result)
        self.pending = max(0, self.pending - 1)
        if self.incumbent is None:
            self._set_incumbent(g, fitness)
        elif self.round_best is None or fitness > self.round_best[1]:
            self.round_best = (g, fitness)

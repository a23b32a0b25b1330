"""First-improvement hill climbing: mutate the incumbent, keep the child if it is better."""

from __future__ import annotations

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.search_space import MUTATE, SAMPLE


class HillClimb(Strategy):
    """Mutates the best genotype so far; restarts after ``patience`` failures to improve."""

    name = "hill-climb"
    requires = frozenset({SAMPLE, MUTATE})

    def __init__(
        self, space: SearchSpace, *, objective: Objective, seed: int = 0, patience: int = 10
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        self.patience = patience
        self.best: tuple[Genotype, float] | None = None
        self.stale = 0

    def ask(self) -> Genotype:
        if self.best is None or self.stale >= self.patience:
            return self.space.sample(self.rng)
        return self.space.mutate(self.best[0], self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        fitness = self.fitness(result)
        restarted = self.stale >= self.patience  # g was a fresh sample: it becomes the incumbent
        if restarted or self.best is None or fitness > self.best[1]:
            self.best, self.stale = (g, fitness), 0
        else:
            self.stale += 1

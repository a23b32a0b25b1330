"""First-improvement hill climbing: mutate the incumbent, keep the child if it is better."""

from __future__ import annotations

from typing import Any

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.search_space import MUTATE, SAMPLE


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

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["best"] = None if self.best is None else [self.best[0].to_json(), self.best[1]]
        state["stale"] = self.stale
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        best = state["best"]
        self.best = None if best is None else (Genotype.from_json(best[0]), float(best[1]))
        self.stale = int(state["stale"])

"""Random search over several objectives: the baseline a multi-objective strategy must beat.

Random search learns nothing from results, so it needs no notion of objectives at all;
what makes it multi-objective is the run: with several objectives, a run ends with the
Pareto front of everything it evaluated (:meth:`nasforge.kernel.objectives.SearchGoal.front`).
"""

from __future__ import annotations

from nasforge import Genotype, Result, Strategy


class MultiObjectiveRandomSearch(Strategy):
    """Draws architectures independently; the run returns the Pareto front of the draws."""

    name = "mo-random"
    multi_objective = True

    def ask(self) -> Genotype:
        return self.space.sample(self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        """Random search learns nothing from results."""

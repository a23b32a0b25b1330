"""Uniform random search: the baseline every other strategy must beat."""

from __future__ import annotations

from nasforge import Genotype, Result, Strategy


class RandomSearch(Strategy):
    """Draws architectures independently from the space's sampler."""

    name = "random"

    def ask(self) -> Genotype:
        return self.space.sample(self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        """Random search learns nothing from results."""

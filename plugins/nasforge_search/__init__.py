"""Black-box baselines: random search, regularized evolution, local search."""

from nasforge_search.local_search import LocalSearch
from nasforge_search.random_search import RandomSearch
from nasforge_search.regularized_evolution import RegularizedEvolution

__all__ = ["LocalSearch", "RandomSearch", "RegularizedEvolution"]

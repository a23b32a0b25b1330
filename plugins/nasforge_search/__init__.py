"""Black-box baselines: random search, regularized evolution, local search; and the
multi-objective ones: random search returning a Pareto front, NSGA-II."""

from nasforge_search.local_search import LocalSearch
from nasforge_search.mo_random import MultiObjectiveRandomSearch
from nasforge_search.nsga2 import NSGA2
from nasforge_search.random_search import RandomSearch
from nasforge_search.regularized_evolution import RegularizedEvolution

__all__ = ["NSGA2", "LocalSearch", "MultiObjectiveRandomSearch", "RandomSearch", "RegularizedEvolution"]

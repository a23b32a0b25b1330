"""Black-box baselines: random search, regularized evolution, local search; the
multi-objective ones: random search returning a Pareto front, NSGA-II; and the
multi-fidelity ones: successive halving, Hyperband (fidelity = epochs) and the median
stopping rule around any of them; and pre-ranking: the top of a training-free ranking
validated, alone or as any strategy's warm start."""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_search.hyperband import Hyperband
    from nasforge_search.local_search import LocalSearch
    from nasforge_search.median_pruner import MedianPruner
    from nasforge_search.mo_random import MultiObjectiveRandomSearch
    from nasforge_search.nsga2 import NSGA2
    from nasforge_search.prerank import PreRank
    from nasforge_search.random_search import RandomSearch
    from nasforge_search.regularized_evolution import RegularizedEvolution
    from nasforge_search.successive_halving import SuccessiveHalving
else:
    lazy_package(__name__)

__all__ = [
    "NSGA2",
    "Hyperband",
    "LocalSearch",
    "MedianPruner",
    "MultiObjectiveRandomSearch",
    "PreRank",
    "RandomSearch",
    "RegularizedEvolution",
    "SuccessiveHalving",
]

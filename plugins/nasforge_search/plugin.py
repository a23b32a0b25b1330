"""Entry point of the baselines plugin."""

from __future__ import annotations

from nasforge import hookimpl
from nasforge_search.hyperband import Hyperband
from nasforge_search.local_search import LocalSearch
from nasforge_search.median_pruner import MedianPruner
from nasforge_search.mo_random import MultiObjectiveRandomSearch
from nasforge_search.nsga2 import NSGA2
from nasforge_search.prerank import PreRank
from nasforge_search.random_search import RandomSearch
from nasforge_search.regularized_evolution import RegularizedEvolution
from nasforge_search.successive_halving import SuccessiveHalving


@hookimpl
def nasforge_register_strategies() -> list[type]:
    return [
        RandomSearch,
        RegularizedEvolution,
        LocalSearch,
        MultiObjectiveRandomSearch,
        NSGA2,
        SuccessiveHalving,
        Hyperband,
        MedianPruner,
        PreRank,
    ]

"""Entry point of the baselines plugin.

Components are imported inside the hooks: the command line loads this module to find
the plugins' commands, and must not pay for torch to print ``--help``.
"""

from __future__ import annotations

from nasforge import hookimpl


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_search.hyperband import Hyperband
    from nasforge_search.local_search import LocalSearch
    from nasforge_search.median_pruner import MedianPruner
    from nasforge_search.mo_random import MultiObjectiveRandomSearch
    from nasforge_search.nsga2 import NSGA2
    from nasforge_search.prerank import PreRank
    from nasforge_search.random_search import RandomSearch
    from nasforge_search.regularized_evolution import RegularizedEvolution
    from nasforge_search.successive_halving import SuccessiveHalving

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

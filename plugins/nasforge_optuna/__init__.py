"""Optuna's samplers (TPE, GP, random, NSGA-II, NSGA-III) as nasforge strategies over any
space that exposes its decisions, and nasforge spaces searched from an Optuna study
(:func:`suggest_genotype`). Optuna is the optional extra ``optuna``, imported when used."""

from nasforge_optuna.strategy import (
    STRATEGIES,
    OptunaGP,
    OptunaNSGA2,
    OptunaNSGA3,
    OptunaRandom,
    OptunaSampling,
    OptunaTPE,
)
from nasforge_optuna.trial import genotype_from_params, suggest_genotype

__all__ = [
    "STRATEGIES",
    "OptunaGP",
    "OptunaNSGA2",
    "OptunaNSGA3",
    "OptunaRandom",
    "OptunaSampling",
    "OptunaTPE",
    "genotype_from_params",
    "suggest_genotype",
]

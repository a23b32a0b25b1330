"""The other direction: a nasforge space searched from an Optuna study.

An Optuna pipeline keeps its own study, storage, pruners and objective; inside the
objective, :func:`suggest_genotype` suggests each of the space's decisions on the trial
and returns the genotype they make, and after the study :func:`genotype_from_params`
turns ``study.best_params`` back into one (to build, train or export)::

    space = nasforge.api.load_space("nb201")

    def objective(trial):
        g = suggest_genotype(trial, space)
        return evaluate(g)  # the pipeline's own training, or a benchmark

    study = optuna.create_study(direction="maximize")
    study.optimize(objective, n_trials=50)
    best = genotype_from_params(space, study.best_params)

``prefix`` namespaces the parameters when a study suggests other things too (learning
rates, a second space).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nasforge.kernel.decisions import decisions_of, genotype_of
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace


def suggest_genotype(trial: Any, space: SearchSpace, *, prefix: str = "") -> Genotype:
    """Suggest every decision of ``space`` on an Optuna ``trial`` (as categorical
    parameters ``prefix + name``) and return the genotype they make."""
    chosen = {
        d.name: trial.suggest_categorical(prefix + d.name, list(d.choices)) for d in decisions_of(space)
    }
    return genotype_of(space, chosen)


def genotype_from_params(space: SearchSpace, params: Mapping[str, Any], *, prefix: str = "") -> Genotype:
    """The genotype in a trial's (or ``study.best_params``') parameters; others are ignored."""
    return genotype_of(space, {d.name: params.get(prefix + d.name) for d in decisions_of(space)})

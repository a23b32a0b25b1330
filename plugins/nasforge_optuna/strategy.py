"""Optuna's samplers as ask/tell strategies over any space that exposes its decisions.

Each ask is an Optuna trial asked of an in-memory study with the space's decisions as
fixed categorical distributions (:mod:`nasforge.kernel.decisions`), read back as a
genotype; each tell finishes that trial with the result's objective values (a failed
result as a FAIL; constraints set on the trial with ``Trial.set_constraint``, where
Optuna's samplers read them: :mod:`nasforge_optuna.mapping`). A result told for a genotype
the strategy did not ask (a warm start's: ``prerank -o then=optuna-tpe``) is added as a
finished trial, so the sampler learns from it as from its own.

There is no second storage. The study lives in memory and a resumed run rebuilds it as
it rebuilds every strategy: the same seeded sampler, told the journal's results in order,
asks what it asked before (the conformance kits check it through the journaled run
loop).

A repeat, a genotype asked again after its result was told (the run answers it from its
memory, costing no query), is told as Optuna's own loop would record it: a complete trial
with the first one's values, the objective evaluated again. The samplers are Optuna's and
behave as they do under ``study.optimize``. (Telling repeats as *pruned* instead, so that
they count among the worse trials, made TPE steer away from the cells it had found best:
on the NAS-Bench-201 table, 20 seeds, CIFAR-10 at 100 queries, 94.16 against 94.33.)

A sampler that has converged asks little but repeats (Optuna's GP on the NAS-Bench-201
table: after about 75 distinct cells, 95 of each 100 asks are repeats), and every copy
grows the study its model is refitted on, so each ask is slower than the last (the 600th
ask of such a run took 1 s). After ``max_repeats`` repeats in a row the strategy is
finished: the run ends with a line saying so, its best found so far kept.

Optuna is an optional extra (``pip install nasforge[optuna]``), imported when such a
strategy is made, never when the plugin loads.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any, ClassVar

from nasforge.kernel.decisions import decisions_of, genotype_of, values_of
from nasforge.kernel.errors import OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.optional import require
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import DECISIONS, SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge_optuna.mapping import constraint_values, directions, values

#: Repeats in a row after which a sampler counts as converged (TPE on the NAS-Bench-201
#: table, 15 runs of 200 queries: at most 19 in a row; GP, once converged: runs over 100).
MAX_REPEATS = 50


def optuna_module(feature: str) -> ModuleType:
    """Optuna, or a one-line error naming the extra that installs it."""
    return require("optuna", extra="optuna", feature=feature)


@contextlib.contextmanager
def quiet(optuna: ModuleType) -> Iterator[None]:
    """Optuna's per-trial INFO lines and experimental-feature warnings held back while we
    drive it (a run prints its own progress); its logger's level is restored after."""
    logger = logging.getLogger("optuna")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        logger.setLevel(level)


class OptunaSampling(Strategy):
    """An Optuna sampler over the space's decisions (subclasses say which, with its options)."""

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset({DECISIONS})
    multi_objective: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        options: dict[str, Any] | None = None,
        max_repeats: int = MAX_REPEATS,
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        if max_repeats < 1:
            raise OptionError(f"{self.name}: option 'max_repeats' must be at least 1, got {max_repeats}")
        self.max_repeats = max_repeats
        #: Asks in a row that repeated a cell already told.
        self.repeats = 0
        self.optuna = optuna_module(f"strategy '{self.name}'")
        self.decisions = decisions_of(space)
        categorical = self.optuna.distributions.CategoricalDistribution
        self.distributions = {d.name: categorical(list(d.choices)) for d in self.decisions}
        given = {k: v for k, v in (options or {}).items() if v is not None}  # unset: Optuna's default
        with quiet(self.optuna):
            self.sampler = self.make_sampler(given)
            self.study = self.optuna.create_study(
                study_name=f"nasforge-{self.name}", sampler=self.sampler, directions=directions(self.goal)
            )
        #: Trials asked and not yet told, by genotype (a genotype asked twice: in order).
        self._pending: dict[Genotype, list[Any]] = {}
        #: Genotypes whose result has been told (a warm start's result is added once).
        self._told: set[Genotype] = set()

    def make_sampler(self, options: dict[str, Any]) -> Any:
        """The seeded sampler (``options``: those the user set)."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """Converged: the last ``max_repeats`` asks all repeated cells already told."""
        return self.repeats >= self.max_repeats

    def ask(self) -> Genotype:
        with quiet(self.optuna):
            trial = self.study.ask(self.distributions)
        g = genotype_of(self.space, trial.params)
        self.repeats = self.repeats + 1 if g in self._told else 0
        self._pending.setdefault(g, []).append(trial)
        return g

    def tell(self, g: Genotype, result: Result) -> None:
        vals = values(self.goal, result)
        held = self._pending.get(g)
        with quiet(self.optuna):
            if not held:
                self._add(g, result, vals)
                return
            trial = held.pop(0)
            if not held:
                del self._pending[g]
            self._told.add(g)  # a repeat too: a copy of the first (the module's docstring)
            if vals is not None:  # a failed trial has none to set
                for name, value in constraint_values(self.goal, result).items():
                    trial.set_constraint(name, value)
            if vals is None:
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            else:
                self.study.tell(trial, vals)

    def _add(self, g: Genotype, result: Result, vals: list[float] | None) -> None:
        """A result for a genotype not asked here (a warm start's): a finished trial."""
        if g in self._told:
            return
        self._told.add(g)
        state = self.optuna.trial.TrialState
        trial = self.optuna.trial.create_trial(
            params=values_of(self.space, g),
            distributions=self.distributions,
            values=vals,
            state=state.COMPLETE if vals is not None else state.FAIL,
            constraints=constraint_values(self.goal, result) if vals is not None else None,
        )
        self.study.add_trial(trial)


class OptunaTPE(OptunaSampling):
    """Optuna's tree-structured Parzen estimator, its default sampler.

    With Optuna's defaults unless set: ``n_startup_trials`` random trials first, then TPE."""

    name = "optuna-tpe"

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        n_startup_trials: int | None = None,
        n_ei_candidates: int | None = None,
        multivariate: bool | None = None,
        constant_liar: bool | None = None,
        max_repeats: int = MAX_REPEATS,
    ) -> None:
        options = {
            "n_startup_trials": n_startup_trials,
            "n_ei_candidates": n_ei_candidates,
            "multivariate": multivariate,
            "constant_liar": constant_liar,
        }
        super().__init__(space, objective=objective, seed=seed, options=options, max_repeats=max_repeats)

    def make_sampler(self, options: dict[str, Any]) -> Any:
        return self.optuna.samplers.TPESampler(seed=self.seed, **options)


class OptunaGP(OptunaSampling):
    """Optuna's Gaussian-process Bayesian optimisation (categorical decisions one-hot)."""

    name = "optuna-gp"

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        n_startup_trials: int | None = None,
        deterministic_objective: bool | None = None,
        max_repeats: int = MAX_REPEATS,
    ) -> None:
        options = {"n_startup_trials": n_startup_trials, "deterministic_objective": deterministic_objective}
        super().__init__(space, objective=objective, seed=seed, options=options, max_repeats=max_repeats)

    def make_sampler(self, options: dict[str, Any]) -> Any:
        return self.optuna.samplers.GPSampler(seed=self.seed, **options)


class OptunaRandom(OptunaSampling):
    """Optuna's random sampler: the baseline its other samplers are measured against."""

    name = "optuna-random"

    def __init__(
        self, space: SearchSpace, *, objective: Objective, seed: int = 0, max_repeats: int = MAX_REPEATS
    ) -> None:
        super().__init__(space, objective=objective, seed=seed, max_repeats=max_repeats)

    def make_sampler(self, options: dict[str, Any]) -> Any:
        return self.optuna.samplers.RandomSampler(seed=self.seed)


class OptunaNSGA2(OptunaSampling):
    """Optuna's NSGA-II (its multi-objective genetic algorithm; uniform crossover)."""

    name = "optuna-nsga2"

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        population_size: int | None = None,
        mutation_prob: float | None = None,
        crossover_prob: float | None = None,
        swapping_prob: float | None = None,
        max_repeats: int = MAX_REPEATS,
    ) -> None:
        options = {
            "population_size": population_size,
            "mutation_prob": mutation_prob,
            "crossover_prob": crossover_prob,
            "swapping_prob": swapping_prob,
        }
        super().__init__(space, objective=objective, seed=seed, options=options, max_repeats=max_repeats)

    def make_sampler(self, options: dict[str, Any]) -> Any:
        return self.optuna.samplers.NSGAIISampler(seed=self.seed, **options)


class OptunaNSGA3(OptunaNSGA2):
    """Optuna's NSGA-III (reference-point selection, for many objectives): NSGA-II's options,
    another survivor selection."""

    name = "optuna-nsga3"

    def make_sampler(self, options: dict[str, Any]) -> Any:
        return self.optuna.samplers.NSGAIIISampler(seed=self.seed, **options)


#: Every strategy this plugin registers.
STRATEGIES: tuple[type[OptunaSampling], ...] = (OptunaTPE, OptunaGP, OptunaRandom, OptunaNSGA2, OptunaNSGA3)

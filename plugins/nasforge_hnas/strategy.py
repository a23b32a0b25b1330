"""The ``hnas`` ask/tell strategy: HNAS through any Evaluator, one evaluation per BO step.

HNAS is hybrid: training-free scores pick candidates, a real evaluation (short training,
or the NAS-Bench-201 table) rates each one, and BO over (μ, ν) learns which trade-off of
the score picks well. As an ask/tell Strategy it runs inside an Experiment (journal,
resume by replay, budgets) against whatever evaluator the user chooses; the final answer
is the Experiment's best trial, i.e. the best-evaluated of the K selected architectures
(thesis Alg. 7.1).
"""

from __future__ import annotations

import math
import os
import random
from typing import Any, ClassVar

from nasforge.genotype import Genotype
from nasforge.option_types import MAX_COUNT, OptionError, first_line
from nasforge.result import Objective, Result
from nasforge.search_space import BUILD, SAMPLE, SearchSpace
from nasforge.strategy import Strategy
from nasforge_hnas.gp import GPSettings
from nasforge_hnas.loop import HnasLoop, LoopSettings, Proposal
from nasforge_hnas.parameterisation import MuNuPlane
from nasforge_hnas.pool import PoolScorer, ScoredPool, sample_genotypes
from nasforge_hnas.pool_cache import PoolCache
from nasforge_hnas.pool_settings import PoolSettings


class Hnas(Strategy):
    """HNAS (Shu et al. 2022): BO over the training-free objective's (μ, ν) on a scored pool."""

    name: ClassVar[str] = "hnas"
    requires: ClassVar[frozenset[str]] = frozenset({SAMPLE, BUILD})

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        steps: int = 20,
        score: str = "non-realizable",
        penalty: str = "abs",
        acquisition: str = "ei",
        xi: float = 0.0,
        init_log10_mu: float | None = None,
        plane: str = "normalised",
        log10_mu_bounds: list[float] | None = None,
        nu_scale: float = 5e3,
        gp_restarts: int = 5,
        pool_size: int = 500,
        pool_growth: int = 0,
        metric: str = "ntk_trace",
        kernel_output: str = "sum",
        kernel_bn: str = "sample",
        batch_size: int = 64,
        data: str = "gaussian",
        input_shape: list[int] | None = None,
        num_classes: int = 10,
        build: dict[str, Any] | None = None,
        init_seed: int = 0,
        device: str = "cpu",
        cache: str | None = None,
    ) -> None:
        """``steps`` is K (it sets the initial design); pool options as :class:`PoolSettings`;
        ``cache`` a JSON-lines file shared by runs with the same scoring settings."""
        super().__init__(space, objective=objective, seed=seed)
        try:
            bounds = tuple(log10_mu_bounds) if log10_mu_bounds is not None else None
            plane_kw: dict[str, Any] = {"mode": plane, "scale": nu_scale}
            if bounds is not None:
                plane_kw["log10_mu"] = bounds
            elif plane == "paper":
                plane_kw["log10_mu"] = (-4.0, 0.0)
            self.loop_settings = LoopSettings(
                steps=steps,
                objective=score,
                penalty=penalty,
                acquisition=acquisition,
                xi=xi,
                init_log10_mu=init_log10_mu,
                plane=MuNuPlane(**plane_kw),
                gp=GPSettings(restarts=gp_restarts),
            )
            self.pool_settings = PoolSettings(
                metric=metric,
                kernel_output=kernel_output,
                kernel_bn=kernel_bn,
                batch_size=batch_size,
                data=data,
                input_shape=tuple(input_shape or (3, 32, 32)),
                num_classes=num_classes,
                build=build or {},
                init_seed=init_seed,
                device=device,
            )
        except (TypeError, ValueError) as exc:  # the settings' own range checks
            raise OptionError(f"bad hnas option: {first_line(exc)}") from exc
        if not 1 <= pool_size <= MAX_COUNT or not 0 <= pool_growth <= MAX_COUNT:
            raise OptionError(f"hnas needs 1 <= pool_size <= {MAX_COUNT} and 0 <= pool_growth <= {MAX_COUNT}")
        self.pool_size, self.pool_growth = pool_size, pool_growth
        self.cache_path = cache
        self._scorer: PoolScorer | None = None
        self._reset(seed)

    # --- pool -------------------------------------------------------------------------
    def _reset(self, seed: int) -> None:
        self.pool_seed = seed
        self.pool = ScoredPool()
        self._pool_rng = random.Random(seed)
        self._drawn = 0
        self.loop = HnasLoop(self.loop_settings, seed=seed)
        self._pending: dict[Genotype, int] = {}
        self._told: list[tuple[int, float]] = []

    @property
    def scorer(self) -> PoolScorer:
        if self._scorer is None:
            cache = PoolCache(os.fspath(self.cache_path)) if self.cache_path else None
            self._scorer = PoolScorer(self.space, self.pool_settings, cache)
        return self._scorer

    def _grow(self) -> None:
        """Draw the pool up to pool_size + step·pool_growth members' worth of samples."""
        target = self.pool_size + len(self.loop.proposals) * self.pool_growth
        if target > self._drawn:
            fresh = sample_genotypes(self.space, target - self._drawn, self._pool_rng)
            self._drawn = target
            self.scorer.fill(self.pool, fresh)

    # --- ask / tell -------------------------------------------------------------------
    def ask(self) -> Genotype:
        self._grow()
        proposal = self.loop.propose(self.pool.metric, self.pool.kappa)
        if proposal is None:  # every pool member evaluated: fall back to uniform samples
            return self.space.sample(self.rng)
        g = self.pool.genotypes[proposal.index]
        self._pending[g] = proposal.step
        return g

    def tell(self, g: Genotype, result: Result) -> None:
        step = self._pending.pop(g, None)
        if step is None:
            return  # a fallback sample, or a duplicate answered by the experiment
        value = self.fitness(result)
        self.loop.observe(step, value)
        self._told.append((step, value))

    # --- inspection -------------------------------------------------------------------
    @property
    def proposals(self) -> list[Proposal]:
        return list(self.loop.proposals)

    def describe(self) -> dict[str, Any]:
        """Settings and the (μ, ν) trajectory, JSON-able, for reports."""
        return {
            "pool": self.pool_settings.to_json(),
            "pool_members": len(self.pool),
            "pool_seconds": float(self.pool.seconds.sum()),
            "proposals": [p.to_json() for p in self.loop.proposals],
        }

    # --- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The seed, the number of asks and the told values: enough to replay exactly."""
        return {
            **super().state_dict(),
            "pool_seed": self.pool_seed,
            "asked": len(self.loop.proposals),
            "told": [[s, _json_float(v)] for s, v in self._told],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replay: rebuild the pool of ``pool_seed`` and re-run every recorded step."""
        self._reset(int(state["pool_seed"]))
        told = {int(s): float(v) for s, v in state["told"]}
        for step in range(int(state["asked"])):
            g = self.ask()
            if step in told:
                self.tell(g, _replayed(told[step], self.objective))
        super().load_state_dict(state)


def _json_float(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def _replayed(value: float, objective: Objective) -> Result:
    """A Result whose fitness is ``value`` again (failures stay failures)."""
    if not math.isfinite(value):
        return Result(objectives={}, failed=True, error="replayed failure")
    raw = value if objective.higher_is_better else -value
    return Result(objectives={objective.name: raw})

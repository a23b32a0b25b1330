"""The ``hnas`` ask/tell strategy: HNAS through any Evaluator, one evaluation per BO step.

HNAS is hybrid: training-free scores pick candidates, a real evaluation (short training,
or the NAS-Bench-201 table) rates each one, and BO over (μ, ν) learns which trade-off of
the score picks well. As an ask/tell Strategy it runs inside an Experiment (journal,
resume by replay, budgets) against whatever evaluator the user chooses; the final answer
is the Experiment's best trial, i.e. the best-evaluated of the K selected architectures
(thesis Alg. 7.1).
"""

from __future__ import annotations

import random
import weakref
from typing import Any, ClassVar

import attrs

from nasforge.kernel.errors import OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.progress_log import ProgressLog
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import BUILD, SAMPLE, SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.tools.scoring import ScoreCache, default_cache_dir, sweep_for
from nasforge_hnas.loop import HnasLoop, Proposal
from nasforge_hnas.pool import PoolScorer, ScoredPool, sample_genotypes
from nasforge_hnas.pool_cache import PoolCache
from nasforge_hnas.settings import HnasSettings
from nasforge_hnas.shared_cache import SharedPoolCache


class Hnas(Strategy):
    """HNAS (Shu et al. 2022): BO over the training-free objective's (μ, ν) on a scored pool."""

    name: ClassVar[str] = "hnas"
    requires: ClassVar[frozenset[str]] = frozenset({SAMPLE, BUILD})
    #: It scores its pool's networks (built with the run's options) where the run's work goes.
    context_fields = Strategy.context_fields | {"registry", "build_options", "parallelism"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        settings: HnasSettings | None = None,
        registry: Registry | None = None,
        build_options: dict[str, Any] | None = None,
        parallelism: Parallelism | None = None,
        **options: Any,
    ) -> None:
        """Configured by ``settings`` from Python, or by the flat options of the command line
        and the journal (``-o steps=20 -o pool_size=500``; ``settings.FLAT_OPTIONS`` lists them),
        which build the same settings. Not both: one would silently override the other.

        ``registry`` is the run's (a run hands it over: its context field): the
        pool looks up a named metric and dataset there, so a caller's own registry is the one
        used. Without one, the pool takes the core scoring helpers' default (process-wide).

        ``build_options`` are the run's network options (``--build-option``): the pool's
        networks are built with them, under the pool's own ``build`` option, so the network
        scored is the one the evaluator trains and the export writes. ``parallelism`` is the
        run's too: where the pool is scored (``--executor``/``--workers``)."""
        super().__init__(space, objective=objective, seed=seed)
        self.registry, self.parallelism = registry, parallelism
        if settings is not None and options:
            raise OptionError(
                f"give hnas either settings or options, not both (options: {', '.join(options)})"
            )
        settings = settings if settings is not None else HnasSettings.from_options(options)
        if build_options:
            pool = attrs.evolve(settings.pool, build={**build_options, **settings.pool.build})
            settings = attrs.evolve(settings, pool=pool)
        self.settings = settings
        self._scorer: PoolScorer | None = None
        self.pool = ScoredPool()
        draw_seed = self.settings.draw.seed
        self._pool_rng = random.Random(seed if draw_seed is None else draw_seed)
        self._drawn = 0
        self.loop = HnasLoop(self.settings.loop, seed=seed)
        self._pending: dict[Genotype, int] = {}

    # --- pool -------------------------------------------------------------------------
    @property
    def scorer(self) -> PoolScorer:
        """The pool's scorer: on the run's executor (its workers started at the first
        uncached candidate, released with this strategy), through the ``cache`` file named
        or else the shared score cache."""
        if self._scorer is None:
            path = self.settings.cache
            cache = PoolCache(path) if path else SharedPoolCache(self.space, ScoreCache(default_cache_dir()))
            runner = sweep_for(self.parallelism, self.registry)
            weakref.finalize(self, runner.close)
            self._scorer = PoolScorer(
                self.space, self.settings.pool, cache, registry=self.registry, executor=runner
            )
        return self._scorer

    def _grow(self) -> None:
        """Draw the pool up to pool_size + step·pool_growth members' worth of samples."""
        draw = self.settings.draw
        target = draw.size + len(self.loop.proposals) * draw.growth
        if target > self._drawn:
            fresh = sample_genotypes(self.space, target - self._drawn, self._pool_rng)
            self._drawn = target
            # minutes of scoring with no bar of its own: say how far it is, every few seconds
            log = ProgressLog("nasforge.hnas", "hnas pool scoring", unit="architecture")
            self.scorer.fill(self.pool, fresh, progress=lambda done, total: self._log_pool(log, done, total))
            if isinstance(self.scorer.cache, SharedPoolCache):
                self.scorer.cache.flush()

    @staticmethod
    def _log_pool(log: ProgressLog, done: int, total: int) -> None:
        log.total = total
        log.update(done)
        if done == total:
            log.finish(done)

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
        self.loop.observe(step, self.fitness(result))

    # --- inspection -------------------------------------------------------------------
    @property
    def proposals(self) -> list[Proposal]:
        return list(self.loop.proposals)

    def describe(self) -> dict[str, Any]:
        """Settings and the (μ, ν) trajectory, JSON-able, for reports."""
        return {
            "variant": self.settings.label(),
            "pool": self.settings.pool.to_json(),
            "pool_members": len(self.pool),
            "pool_seconds": float(self.pool.seconds.sum()),
            "proposals": [p.to_json() for p in self.loop.proposals],
        }

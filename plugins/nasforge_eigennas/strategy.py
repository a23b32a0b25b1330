"""The ``eigennas`` ask/tell strategy: score a pool training-free, ask its top-k, keep the best.

Eigen-NAS (§5.2, following KNAS): rank candidates by the trace of the empirical
kernel, an O(N) upper-bound proxy of λ_min(NTK), keep the top-k, and return the one the
evaluator rates best; under the benchmark protocol that is the best *validation* accuracy,
and the run reports the chosen cell's test accuracy (the evaluator's ``reported``).

Candidates are scored on the run's own training data (``score_data="run"``, the default):
the batch and the networks' input shape and classes are those the evaluator trains on.
Data-agnostic scoring (Gaussian inputs, random labels) happens only when asked
(``score_data="gaussian"``) and is then said in the log; a run with no training data (a
benchmark table) must say which it wants.

As an ask/tell strategy it runs in an Experiment like any other (journal, budget,
resume, export): the first ask scores the pool (no evaluator cost; minutes of CPU for a
few hundred NAS-Bench-201 cells, on the run's ``--executor``/``--workers``, and cached in
the shared score cache or ``cache=DIR``), then each ask is the
next of the top-k, best-scored first. After the k-th there is nothing left to propose,
so it asks its best again, which the run answers from its memory, and a run with
duplicate detection (the default) ends there: exactly k evaluations, whatever the
budget. Everything depends only on the seed and the options (the pool is drawn from the
strategy's rng, every network initialised from ``init_seed``), so a resumed run replays
to the same place.

The pool's scores, the top-k and what the evaluator said of each are in
:meth:`EigenNas.rows` / :meth:`EigenNas.table` (and logged, and written next to the journal,
when a run ends; see the plugin's ``nasforge_search_end``).
"""

from __future__ import annotations

import logging
import math
import random
import time
from typing import Any, ClassVar

from rich.table import Table

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.progress_log import ProgressLog
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import BUILD, SAMPLE, SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.tools.scoring import metric_label, resolve_metrics, sweep_for
from nasforge_eigennas.pool import Ranked, draw_candidates, rank_candidates, score_candidates
from nasforge_eigennas.settings import Labels, ScoreSettings

logger = logging.getLogger("nasforge.eigennas")


class EigenNas(Strategy):
    """Eigen-NAS (Zhu et al., NeurIPS 2022): trace-proxy ranking, top-k, best by the evaluator."""

    name: ClassVar[str] = "eigennas"
    requires: ClassVar[frozenset[str]] = frozenset({SAMPLE, BUILD})
    #: It scores its pool on the run's data, on its device, where the run's work goes.
    context_fields = Strategy.context_fields | {"registry", "device", "data", "build_options", "parallelism"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        registry: Registry | None = None,
        sample_size: int = 100,
        top_k: int = 20,
        metric: str = "eigennas_trace",
        score_data: str = "run",
        batch_size: int = 50,
        input_shape: tuple[int, ...] = (3, 32, 32),
        num_classes: int = 10,
        labels: Labels = "true",
        build: dict[str, Any] | None = None,
        init_seed: int | None = None,
        cache: str | bool | None = True,
        device: str = "cpu",
        chunk_size: int = 64,
        pool_seed: int | None = None,
        data: TensorData | None = None,
        build_options: dict[str, Any] | None = None,
        parallelism: Parallelism | None = None,
    ) -> None:
        """``sample_size`` candidates are scored (the whole space if it is enumerable and no
        larger) by ``metric`` (any registered one; ``eigennas_trace`` is the paper's,
        ``eigennas_ntk_trace`` the output-NTK reading, ``knas`` the KNAS paper's MGM,
        ``eigennas_ntk_diag`` the data-free infinite-width trace of mlp-res) on
        ``batch_size`` samples of ``score_data``: "run" (the run's training data, ``data``,
        which a run hands over), "gaussian" (data-agnostic, of ``input_shape`` with
        ``num_classes`` random labels) or a dataset name. Each network is built with
        ``build`` (over the run's ``build_options``) and initialised from ``init_seed``
        (default: ``seed``); the ``top_k`` best are evaluated. ``cache``: true for the
        shared score cache, a directory, or false/None for none. ``pool_seed`` draws the
        pool from its own seed (default: the run's), so several seeds can rank one fixed
        pool. ``parallelism`` is the run's (where the pool is scored)."""
        super().__init__(space, objective=objective, seed=seed)
        if not 1 <= top_k <= sample_size:
            raise OptionError(
                f"eigennas needs 1 <= top_k <= sample_size, got top_k={top_k}, sample_size={sample_size}"
            )
        metric_obj = resolve_metrics([metric], registry=registry)[-1]  # an unknown name: one line, now
        if score_data == "run" and data is None and not metric_obj.info.needs_data:
            score_data = "gaussian"  # a data-free score reads no batch (the networks are built for one)
        if score_data == "run" and data is None:
            raise OptionError(
                "eigennas scores candidates on the run's training data, and this run has none (an "
                "evaluator that does not train, e.g. a benchmark table): give -o score_data=gaussian "
                "(data-agnostic; -o input_shape, -o num_classes) or -o score_data=<dataset>"
            )
        self.registry = registry
        self.sample_size, self.top_k = sample_size, top_k
        self.pool_seed = pool_seed
        self.data = data if score_data == "run" else None
        self.settings = ScoreSettings(
            metric=metric,
            data=data.name if score_data == "run" and data is not None else score_data,
            batch_size=batch_size,
            input_shape=input_shape,
            num_classes=num_classes,
            labels=labels,
            build={**(build_options or {}), **(build or {})},
            init_seed=seed if init_seed is None else init_seed,
            device=device,
            chunk_size=chunk_size,
        )
        self.cache, self.parallelism = cache, parallelism
        if metric_obj.info.population:
            raise OptionError(f"eigennas ranks by one network's score; metric '{metric}' ranks a population")
        self.label = metric_label(metric_obj)
        self.higher_is_better = metric_obj.info.higher_is_better
        self.needs_data = metric_obj.info.needs_data
        self.ranked: list[Ranked] | None = None
        self.scoring_seconds = 0.0
        self._asked = 0
        self.results: dict[Genotype, float] = {}

    # --- scoring ------------------------------------------------------------------------
    def score_pool(self) -> list[Ranked]:
        """Draw and score the pool (once), best first."""
        if self.ranked is None:
            rng = self.rng if self.pool_seed is None else random.Random(self.pool_seed)
            pool = draw_candidates(self.space, self.sample_size, rng)
            log = ProgressLog(
                logger,
                f"eigennas scoring {len(pool)} candidates by {self.label}",
                len(pool),
                unit="candidate",
            )
            if self.settings.data == "gaussian" and self.needs_data:
                s = self.settings
                logger.warning(
                    "eigennas: scoring data-agnostic, as asked: N(0, I) inputs of shape %s with %s "
                    "labels over %d classes (no dataset)",
                    list(s.input_shape),
                    "uniform random" if s.labels == "true" else "random",
                    s.num_classes,
                )
            start = time.perf_counter()
            with sweep_for(self.parallelism, self.registry) as runner:
                table = score_candidates(
                    self.space,
                    pool,
                    self.settings,
                    dataset=self.data,
                    registry=self.registry,
                    cache=self.cache,
                    progress=lambda done, _total: log.update(done),
                    executor=runner,
                )
            self.scoring_seconds = time.perf_counter() - start
            log.finish(len(pool))
            self.ranked = rank_candidates(table, self.label, self.higher_is_better)
            usable = sum(math.isfinite(r.score) for r in self.ranked)
            if not usable:  # the ranking is then the draw order: say so rather than pretend
                first = next((r.error for r in self.ranked if r.error), "every score is NaN or infinite")
                logger.warning(
                    "eigennas: no candidate has a usable %s score (%s); the top %d are the first drawn",
                    self.label,
                    first,
                    min(self.top_k, len(pool)),
                )
            logger.info(
                "eigennas: scored %d candidates in %.1f s (%d usable); evaluating the top %d",
                len(pool),
                self.scoring_seconds,
                usable,
                min(self.top_k, len(pool)),
            )
        return self.ranked

    @property
    def top(self) -> list[Ranked]:
        return self.score_pool()[: self.top_k]

    # --- ask / tell ---------------------------------------------------------------------
    def ask(self) -> Genotype:
        top = self.top
        if self._asked < len(top):
            g = top[self._asked].genotype
            self._asked += 1
            return g
        return self.best or top[0].genotype  # the top-k is spent: nothing new to propose

    def tell(self, g: Genotype, result: Result) -> None:
        self.results[g] = self.fitness(result)

    @property
    def best(self) -> Genotype | None:
        """The evaluated top-k member the evaluator rates best (ties: the better score)."""
        order = {r.genotype: r.rank for r in self.top}
        told = [(f, -order.get(g, len(order)), g) for g, f in self.results.items() if f > -math.inf]
        return max(told, key=lambda t: t[:2])[2] if told else None

    @property
    def finished(self) -> bool:
        """Whether every top-k member has been asked."""
        return self.ranked is not None and self._asked >= len(self.top)

    # --- reports ------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """Every scored candidate, best score first: rank, genotype text, score, whether it
        is in the top-k, the evaluator's fitness (None unless evaluated), whether chosen."""
        best = self.best
        out = []
        for r in self.score_pool():
            fit = self.results.get(r.genotype)
            out.append(
                {
                    "rank": r.rank + 1,
                    "genotype": self.space.format(r.genotype),
                    "score": r.score,
                    "top_k": r.rank < self.top_k,
                    "fitness": None if fit is None or not math.isfinite(fit) else fit,
                    "chosen": r.genotype == best,
                    "score_seconds": r.seconds,
                    "error": r.error,
                }
            )
        return out

    def table(self, limit: int | None = None) -> Table:
        """A rich table of the candidates (the top ``limit``, default the top-k and the chosen)."""
        rows = self.rows()
        shown = rows[: self.top_k if limit is None else limit]
        fitness_name = self.goal.objectives[0].name
        t = Table(title=f"eigennas: {len(rows)} candidates by {self.label}, top {self.top_k} evaluated")
        for col in ("rank", self.label, fitness_name, "", "architecture"):
            t.add_column(col, justify="right" if col in ("rank", self.label, fitness_name) else "left")
        for row in shown:
            fit = "-" if row["fitness"] is None else f"{row['fitness']:.4g}"
            t.add_row(
                str(row["rank"]),
                f"{row['score']:.5g}",
                fit,
                "chosen" if row["chosen"] else "",
                row["genotype"],
            )
        return t

    def describe(self) -> dict[str, Any]:
        """Settings and the top-k, JSON-able, for reports."""
        top = self.top
        return {
            "settings": self.settings.to_json(),
            "sample_size": self.sample_size,
            "pool_seed": self.pool_seed,
            "candidates": len(self.score_pool()),
            "top_k": self.top_k,
            "metric": self.label,
            "scoring_seconds": self.scoring_seconds,
            "top": [{"genotype": self.space.format(r.genotype), "score": r.score} for r in top],
            "chosen": None if self.best is None else self.space.format(self.best),
        }

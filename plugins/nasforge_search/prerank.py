"""Pre-ranking: rank architectures training-free, validate the top k, and stop (or go on).

Training-free metrics rank untrained networks in milliseconds each; none of them picks
the best architecture alone, but the best is usually among the few they rank highest. So
this strategy ranks a pool (the whole space where it is enumerable: all 15,625
NAS-Bench-201 cells) by a metric, or by the mean rank of several metrics or of one metric
under several initialisation seeds (:func:`nasforge.tools.scoring.rank_pool`), asks the
top ``top_k`` in rank order, and is then finished: under the benchmark protocol the run
returns the one validation rates best and reports its test accuracy.

With ``then=STRATEGY`` it does not stop: the top k are a warm start. Once their results
are in, they are told to the other strategy best first (by :meth:`~nasforge.Strategy.rank`),
as if it had proposed them, and it asks from there on: regularized evolution's first
population holds them, local search starts at the best, an Optuna sampler's first trials
are them. Any ask/tell strategy that learns from what it is told takes this warm start.

With ``cost_metric=flops`` (or ``params``: a training-free cost, smaller is better) the top k
spread along the trade-off instead: the pool is sorted into Pareto fronts of (ranking score,
cost), and the k are taken front by front, evenly along each front by cost. That is the warm
start for a goal of accuracy and a cost such as latency, where a top k by an accuracy proxy
alone would be ten large, slow networks at one end of the front.

The pool is scored through the core's scorer and the shared score cache (``nasforge
correlate --all`` with the same metric, seed and settings leaves every score there), on
the run's executor (``--executor process --workers 2``: two cores). Everything follows from
the options and the seed (the pool of a space too large to enumerate is drawn from the
seed), so a resumed run replays to the same point.

    nasforge search --strategy prerank -o top_k=10 --evaluator nb201-table --budget-trials 10
    nasforge search --strategy prerank -o then=rea --evaluator nb201-table --budget-trials 100
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from nasforge import Genotype, Objective, Result, SearchSpace, Strategy
from nasforge.kernel.datasets import TensorData, is_data_path
from nasforge.kernel.errors import OptionError
from nasforge.kernel.option_types import MAX_COUNT, check_option
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.pareto import non_dominated
from nasforge.kernel.progress_log import ProgressLog
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import BUILD, ENUMERATE, SAMPLE
from nasforge.run.construction import build_component
from nasforge.run.defaults import RANKING_METRIC
from nasforge.tools.scoring import Ranking, RankingSettings, rank_pool

logger = logging.getLogger("nasforge.prerank")

#: The pool of a space that cannot be enumerated (or is larger than this): distinct draws.
DEFAULT_POOL = 1000
#: Uniform draws per wanted pool member before a pool settles for fewer distinct ones.
DRAWS_PER_MEMBER = 50


def _ranking_data(score_data: str, data: TensorData | None) -> str | TensorData:
    """What the pool is scored on: the run's data for ``"run"`` (data-agnostic Gaussian
    inputs where the run has none), else the named data."""
    check_option("score_data", score_data, str)
    if score_data != "run":
        return score_data
    return data if data is not None else "gaussian"


class PreRank(Strategy):
    """Validate the top k of a training-free ranking; then stop, or warm-start ``then``.

    ``metric`` is one name or several (ranked by their mean rank). A goal of several
    objectives is searched as ``then`` searches it (``then=nsga2``: NSGA-II's first
    generation includes the top k); ``then`` must take several (its constructor refuses
    otherwise, in one line); without ``then`` the run's front is that of the top k."""

    name: ClassVar[str] = "prerank"
    requires: ClassVar[frozenset[str]] = frozenset({SAMPLE, BUILD})
    multi_objective: ClassVar[bool] = True
    #: It ranks on the run's training data (``data``) unless ``score_data`` names other data,
    #: on its device, where the run's work goes; ``then`` comes from the run's registry.
    context_fields = Strategy.context_fields | {"registry", "data", "device", "parallelism"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        metric: str | list[str] = RANKING_METRIC,
        top_k: int = 10,
        pool: int | None = None,
        init_seeds: list[int] | None = None,
        score_data: str = "run",
        batch_size: int = 64,
        labels: str = "true",
        build: dict[str, Any] | None = None,
        device: str = "cpu",
        cache: bool | str = True,
        cost_metric: str | None = None,
        then: str | None = None,
        then_options: dict[str, Any] | None = None,
        registry: Registry | None = None,
        parallelism: Parallelism | None = None,
        data: TensorData | None = None,
    ) -> None:
        """``pool``: how many architectures to rank (default: the whole space if it can be
        enumerated, else 1000 distinct draws). ``init_seeds``: the networks' initialisation
        seeds (default [0], as ``nasforge score``'s ``--seed``), ranks averaged over several.
        ``score_data``: what the networks are scored on: "run" (the run's training data,
        ``data``, which a run hands over; "gaussian" for a run without any), "gaussian"
        (data-agnostic) or a dataset name (``-o score_data=digits``). ``batch_size``,
        ``labels``, ``build`` and ``device`` are ``nasforge score``'s.
        ``cache``: true for the shared score cache, false for none, or a directory.
        ``cost_metric``: a training-free cost (``flops``, ``params``) to spread the top k
        along (module docstring)."""
        super().__init__(space, objective=objective, seed=seed)
        check_option("top_k", top_k, int)
        check_option("pool", pool, int | None)
        if not 1 <= top_k <= MAX_COUNT or (pool is not None and not top_k <= pool <= MAX_COUNT):
            raise OptionError(
                f"prerank needs 1 <= top_k <= pool (at most {MAX_COUNT}), got top_k={top_k} and pool={pool}"
            )
        try:
            self.settings = RankingSettings(
                metrics=[metric] if isinstance(metric, str) else metric,
                seeds=[0] if init_seeds is None else init_seeds,
                data=_ranking_data(score_data, data),
                batch_size=batch_size,
                labels=labels,
                build=dict(build or {}),
                device=device,
            )
        except (TypeError, ValueError) as exc:
            raise OptionError(f"prerank: {exc}") from exc
        self.registry = registry if registry is not None else get_registry()
        check_option("cost_metric", cost_metric, str | None)
        for name in (*self.settings.metrics, *([cost_metric] if cost_metric else [])):
            self.registry.get("metric", name)  # an unknown metric: one line now, not at the first ask
        named = self.settings.data
        if isinstance(named, str) and not is_data_path(named):
            self.registry.get("dataset", named)  # so is an unknown dataset (a file is read when ranking)
        self.cost_metric = cost_metric
        self._top: list[Genotype] | None = None
        self.top_k, self.pool_size, self.cache = top_k, pool, cache
        self.parallelism = parallelism
        self.ranking: Ranking | None = None
        self._asked = 0
        #: Top-k members asked and not yet told, and the results told (for `then`).
        self._warm_out: set[Genotype] = set()
        self._warm_in: list[tuple[int, Genotype, Result]] = []
        self.results: dict[Genotype, float] = {}
        self.then = self._inner(then, then_options, objective, seed)
        if self.goal.multi_objective and cost_metric is None:
            # measured (README, two objectives, CIFAR-10, 20 queries): warm-started by the ten
            # synflow-top cells NSGA-II's hypervolume is 0.26 against 0.75 from a random
            # start; spread along (synflow, flops), 0.73
            logger.info(
                "prerank: %d objectives, but the top %d by %s alone sit at the accurate, costly end "
                "of the front; -o cost_metric=flops (or params) spreads them along the trade-off",
                len(self.goal.objectives),
                top_k,
                ", ".join(self.settings.metrics),
            )

    def _inner(
        self, then: str | None, options: dict[str, Any] | None, objective: Objective, seed: int
    ) -> Strategy | None:
        if then is None:
            if options:
                raise OptionError("prerank: then_options without then; name the strategy to warm-start")
            return None
        if then == self.name:
            raise OptionError("prerank cannot warm-start itself; name another strategy with then")
        # built as the run builds a strategy, from what this one was given
        context = RunContext(seed=seed, registry=self.registry)
        if self.parallelism is not None:
            context = attrs.evolve(context, parallelism=self.parallelism)
        return build_component(
            "strategy",
            self.registry.get("strategy", then),
            context,
            dict(options or {}),
            self.space,
            objective=objective,
            plugin=self.registry.origin("strategy", then),
        )

    # --- the ranking ----------------------------------------------------------------------
    def ranked(self) -> Ranking:
        """The pool, ranked (scored on the first call)."""
        if self.ranking is None:
            members = self._pool()
            log = ProgressLog(
                logger,
                f"prerank scoring {len(members)} architectures by {', '.join(self.settings.metrics)}",
                len(members) * len(self.settings.seeds),
                unit="score",
            )
            self.ranking = rank_pool(
                self.space,
                members,
                self.settings,
                registry=self.registry,
                parallelism=self.parallelism,
                cache=self.cache,
                progress=lambda done, _total: log.update(done),
            )
            log.finish(len(members) * len(self.settings.seeds))
            logger.info(
                "prerank: ranked %d architectures in %.1f s (%d scores computed, the rest cached)",
                len(self.ranking),
                self.ranking.seconds,
                self.ranking.computed,
            )
        return self.ranking

    def _pool(self) -> list[Genotype]:
        size, wanted = self.space.size, self.pool_size
        if ENUMERATE in self.space.capabilities and size is not None and (wanted is None or wanted >= size):
            return list(self.space.enumerate())
        wanted = wanted if wanted is not None else DEFAULT_POOL
        drawn: dict[Genotype, None] = {}
        rng = random.Random(self.seed)  # the pool alone: the same for any `then`
        for _ in range(DRAWS_PER_MEMBER * wanted):
            drawn.setdefault(self.space.sample(rng))
            if len(drawn) == wanted:
                break
        return list(drawn)

    @property
    def top(self) -> list[Genotype]:
        """The k asked first: the ranking's top k, or with ``cost_metric`` k along the fronts."""
        if self._top is None:
            ranking = self.ranked()
            self._top = ranking.top(self.top_k) if self.cost_metric is None else self._spread(ranking)
        return self._top

    def _spread(self, ranking: Ranking) -> list[Genotype]:
        cost = rank_pool(
            self.space,
            list(ranking.genotypes),
            attrs.evolve(self.settings, metrics=(self.cost_metric,)),
            registry=self.registry,
            parallelism=self.parallelism,
            cache=self.cache,
        )
        # the raw cost, whatever direction the metric declares as a ranking (flops and params
        # rank larger networks first): smaller is cheaper, so its negative is larger-is-better
        raw = np.mean(np.asarray(list(cost.columns.values()), dtype=np.float64), axis=0)
        cheap = dict(zip(cost.genotypes, (-raw).tolist(), strict=True))
        points = [(score, cheap[g]) for g, score in zip(ranking.genotypes, ranking.scores, strict=True)]
        return [ranking.genotypes[i] for i in spread_along_fronts(points, self.top_k)]

    # --- ask / tell -----------------------------------------------------------------------
    def ask(self) -> Genotype:
        top = self.top
        if self._asked < len(top):
            g = top[self._asked]
            self._asked += 1
            self._warm_out.add(g)
            return g
        if self.then is not None:
            return self.then.ask()  # type: ignore[return-value]
        return self.best or top[0]  # finished: the run asks no more (a direct caller may)

    def tell(self, g: Genotype, result: Result) -> None:
        if g in self._warm_out:
            self._warm_out.discard(g)
            self.results[g] = self.fitness(result)
            self._warm_in.append((len(self._warm_in), g, result))
            if self.then is not None and self._asked >= len(self.top) and not self._warm_out:
                self._hand_over()
            return
        if self.then is not None:
            self.then.tell(g, result)

    def _hand_over(self) -> None:
        """The warm start: the top k's results told to ``then``, best first (ties: rank order)."""
        assert self.then is not None
        order = {g: k for k, g in enumerate(self.top)}
        told = sorted(self._warm_in, key=lambda t: (tuple(-x for x in self.goal.rank(t[2])), order[t[1]]))
        for _, g, result in told:
            self.then.tell(g, result)
        self._warm_in = []

    @property
    def best(self) -> Genotype | None:
        """The validated top-k member the evaluator rates best (ties: the better ranked)."""
        if self.ranking is None:
            return None
        order = {g: k for k, g in enumerate(self.top)}
        told = [(f, -order[g], g) for g, f in self.results.items() if f > float("-inf")]
        return max(told, key=lambda t: t[:2])[2] if told else None

    @property
    def finished(self) -> bool:
        """Without ``then``: once the top k have been asked; with it, when it is."""
        if self.then is not None:
            return self.then.finished
        return self.ranking is not None and self._asked >= len(self.top)

    def describe(self) -> dict[str, Any]:
        """Settings, the scoring's cost and the top k with their scores, JSON-able."""
        ranking = self.ranked()
        score = dict(zip(ranking.genotypes, ranking.scores, strict=True))
        return {
            "settings": self.settings.to_json(),
            "pool": len(ranking),
            "top_k": self.top_k,
            "scoring_seconds": ranking.seconds,
            "scores_computed": ranking.computed,
            "cost_metric": self.cost_metric,
            "top": [
                {"genotype": self.space.format(g), "score": score[g], "fitness": self.results.get(g)}
                for g in self.top
            ],
            "chosen": None if self.best is None else self.space.format(self.best),
            "then": None if self.then is None else self.then.name,
        }


def spread_along_fronts(points: Sequence[tuple[float, float]], k: int) -> list[int]:
    """Indices of ``k`` points (both coordinates larger-is-better), front by front: a front
    that fits is taken whole, best first by the first coordinate; the front that does not
    fit gives ``slots`` members evenly spaced along it by the second coordinate, both ends
    included. In the order taken. Fronts are peeled only until k are taken (a whole-space
    pool of 15,625 cells has hundreds of fronts; sorting them all took 95 s)."""
    remaining = list(range(len(points)))
    out: list[int] = []
    while remaining and len(out) < k:
        front = [remaining[i] for i in non_dominated([points[j] for j in remaining], [True, True])]
        slots = k - len(out)
        if len(front) <= slots:
            out += sorted(front, key=lambda i: (-points[i][0], i))
        else:
            along = sorted(front, key=lambda i: (points[i][1], -points[i][0], i))
            picks = np.round(np.linspace(0, len(along) - 1, slots)).astype(int) if slots > 1 else [0]
            out += [along[j] for j in dict.fromkeys(int(p) for p in picks)]
        taken = set(front)
        remaining = [i for i in remaining if i not in taken]
    return out[:k]

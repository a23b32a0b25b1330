"""Pool pre-scoring: the candidate architectures of HNAS and their (M, κ).

HNAS never optimises over the discrete space directly: it ranks a pre-scored pool by
the score of the current (μ, ν) (thesis Alg. 7.1). The pool grows as in the authors'
code (a batch of random architectures added per BO step) or stays fixed; each
architecture is built from the same init seed and scored on the same fixed batch, so
its scores do not depend on when or in which search it entered the pool.

M is a magnitude: the pool keeps |M|, as the thesis defines M_SNIP, M_GraSP and M_KNAS
(absolute values), so a signed metric such as the zero-cost GraSP cannot make κ/M
negative and win the arg-min. The authors' code does not do this: its ``abs`` of the
metrics is commented out, so a signed metric enters its score as it is; |M| is our
reading of the thesis. A metric that cannot be read as a magnitude is refused when the
scorer is made (:func:`unfit_for_m`).

κ depends only on the kernel settings, never on M, so a pool scored with a registered
metric as M takes κ from the cache entry M_Trace left under the same settings, when there
is one, and computes only the metric (a variant's pool costs a metric, not a kernel).

Scoring a pool is a metric sweep: :meth:`PoolScorer.fill` runs it on the scorer's
``executor`` (:mod:`nasforge.tools.scoring.parallel`: in this process, a process pool or Ray), in
chunks, with the same networks on the same batch whatever runs them; the cache is read
and written by the scorer's process only.

A named metric and a named dataset are looked up in the registry the scorer is given
(the run's, handed to :class:`~nasforge_hnas.Hnas`), never in the process-wide one, so a
run made with its own registry scores its pool with that registry's components.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import torch

import nasforge
from nasforge.kernel.datasets import build_option_names, network_options
from nasforge.kernel.errors import OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Metric, MetricContext, MetricInfo
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.backends import KernelSpec
from nasforge.tools.scoring import InProcessSweep, SweepExecutor, fixed_batch, map_chunks, resolve_metrics
from nasforge_hnas.pool_cache import PoolCache
from nasforge_hnas.pool_metrics import PoolMetrics, measure
from nasforge_hnas.pool_settings import M_TRACE, PoolSettings

if TYPE_CHECKING:
    from nasforge_hnas.shared_cache import SharedPoolCache

Progress = Callable[[int, int], None]


class ScoredPool:
    """Genotypes with their metric, κ and scoring seconds, in insertion order."""

    def __init__(self) -> None:
        self.genotypes: list[Genotype] = []
        self._index: dict[Genotype, int] = {}
        self._metric: list[float] = []
        self._kappa: list[float] = []
        self._seconds: list[float] = []

    def __len__(self) -> int:
        return len(self.genotypes)

    def __contains__(self, g: Genotype) -> bool:
        return g in self._index

    def index(self, g: Genotype) -> int:
        return self._index[g]

    def add(self, g: Genotype, m: PoolMetrics) -> None:
        if g in self._index:
            return
        self._index[g] = len(self.genotypes)
        self.genotypes.append(g)
        self._metric.append(abs(m.metric))  # |M| (module docstring); the cache keeps M as scored
        self._kappa.append(m.kappa)
        self._seconds.append(m.seconds)

    @property
    def metric(self) -> np.ndarray:
        """|M| of every member, in insertion order."""
        return np.asarray(self._metric, dtype=np.float64)

    @property
    def kappa(self) -> np.ndarray:
        return np.asarray(self._kappa, dtype=np.float64)

    @property
    def seconds(self) -> np.ndarray:
        return np.asarray(self._seconds, dtype=np.float64)


class PoolScorer:
    """Scores genotypes of one space under one :class:`PoolSettings`, through a cache.

    ``registry`` resolves a named metric (any but :data:`M_TRACE`) and a named dataset
    (any but ``gaussian``), through the core's scoring helpers
    (:func:`nasforge.tools.scoring.resolve_metrics`, :func:`nasforge.tools.scoring.fixed_batch`, which
    loads with :func:`nasforge.kernel.datasets.load_dataset`): a run's scorer gets the run's
    registry. Without one (a direct Python caller), those helpers take the process-wide
    registry, as the pool always did.

    ``executor`` runs :meth:`fill`'s scoring (None: in this process); the caller made it and
    closes it, and may set the attribute later (``nasforge search --strategy hnas --executor``). It changes
    where the numbers are computed, never the numbers.
    """

    def __init__(
        self,
        space: SearchSpace,
        settings: PoolSettings,
        cache: PoolCache | SharedPoolCache | None = None,
        *,
        registry: Registry | None = None,
        executor: SweepExecutor | None = None,
    ) -> None:
        self.space = space
        self.settings = settings
        self.cache = cache
        self.registry = registry
        self.executor = executor
        self._batch: tuple[torch.Tensor, torch.Tensor] | None = None
        self._num_classes = settings.num_classes
        self._metric: Metric | None = None
        try:  # a kernel the settings cannot form (e.g. bn "decomposed" on every parameter): one line now
            self.kernel = settings.kernel
        except ValueError as exc:
            raise OptionError(f"pool kernel settings: {exc}") from exc
        if settings.metric != M_TRACE:
            # the metric asked for comes last (a population metric's members are put first;
            # such a metric has no value for one network and is refused just below)
            self._metric = resolve_metrics([settings.metric], registry=registry)[-1]
            problem = unfit_for_m(self._metric.info)
            if problem is not None:
                raise OptionError(f"metric '{settings.metric}' cannot serve as HNAS's M: {problem}")
        self.key = pool_key(space, settings, None if self._metric is None else self._metric.info.version)
        #: The M_Trace pool of the same settings, whose cached κ a registered metric reuses.
        self.kappa_key = (
            None if self._metric is None else pool_key(space, attrs.evolve(settings, metric=M_TRACE), None)
        )

    def batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The one fixed batch every candidate is scored on (drawn on first use)."""
        if self._batch is None:
            s = self.settings
            gen = torch.Generator().manual_seed(s.init_seed)
            if s.data == "gaussian":
                x = torch.randn((s.batch_size, *s.input_shape), generator=gen)
                y = torch.randint(0, s.num_classes, (s.batch_size,), generator=gen)
            else:
                # the dataset loaded and sampled with the init seed, as load_dataset(...).batch does
                fb = fixed_batch(s.data, batch_size=s.batch_size, seed=s.init_seed, registry=self.registry)
                x, y = fb.x, fb.y
                self._num_classes = fb.num_classes  # the data's, as its networks are built for
            self._batch = (x.to(s.device), y.to(s.device))
        return self._batch

    def score(self, g: Genotype) -> PoolMetrics:
        """(M, κ) of one genotype; a network that fails to build or score gets NaN."""
        text = self.space.format(g)
        if self.cache is not None:
            hit = self.cache.get(self.key, text)
            if hit is not None:
                return hit
        value = map_chunks(InProcessSweep(), score_pool_chunk, self.job(), [(g, self._known_kappa(text))])[0]
        if self.cache is not None:
            self.cache.put(self.key, text, value)
        return value

    def _known_kappa(self, text: str) -> float | None:
        """κ of ``text`` from the cached M_Trace pool of the same settings, if any."""
        if self.cache is None or self.kappa_key is None:
            return None
        hit = self.cache.get(self.kappa_key, text)
        return None if hit is None else hit.kappa

    def job(self) -> PoolJob:
        """What every candidate's scoring shares, as shipped to a worker."""
        x, y = self.batch()
        build = dict(self.settings.build)
        if self.settings.data != "gaussian":  # what a dataset decides (classes, image channels)
            accepted = build_option_names(self.space)
            build = {**network_options(tuple(x.shape[1:]), self._num_classes, accepted=accepted), **build}
        return PoolJob(
            self.space, self.settings, self._metric, self.kernel, x.cpu(), y.cpu(), build, self._num_classes
        )

    def fill(
        self,
        pool: ScoredPool,
        genotypes: Sequence[Genotype],
        progress: Progress | None = None,
        *,
        per_task: int | None = None,
    ) -> None:
        """Score and add every genotype not yet in ``pool``, in the given order; the
        uncached ones on :attr:`executor`, ``per_task`` per task (default: a few chunks per
        worker). ``progress(done, total)`` moves as chunks finish."""
        todo = [g for g in dict.fromkeys(genotypes) if g not in pool]
        found: dict[Genotype, PoolMetrics] = {}
        if self.cache is not None:
            for g in todo:
                hit = self.cache.get(self.key, self.space.format(g))
                if hit is not None:
                    found[g] = hit
        done = len(found)
        if progress is not None and done:
            progress(done, len(todo))
        missing = [g for g in todo if g not in found]

        def finished(chunk: list[Genotype], values: list[PoolMetrics]) -> None:
            nonlocal done
            if self.cache is not None:
                for g, value in zip(chunk, values, strict=True):
                    self.cache.put(self.key, self.space.format(g), value)
            done += len(chunk)
            if progress is not None:
                progress(done, len(todo))

        if missing:
            runner = self.executor if self.executor is not None else InProcessSweep()
            items = [(g, self._known_kappa(self.space.format(g))) for g in missing]
            scored = map_chunks(
                runner,
                score_pool_chunk,
                self.job(),
                items,
                per_task=per_task,
                on_chunk=lambda chunk, values: finished([g for g, _ in chunk], values),
            )
            found.update(zip(missing, scored, strict=True))
        for g in todo:
            pool.add(g, found[g])


@attrs.frozen(eq=False)
class PoolJob:
    """What scoring one pool candidate needs besides the genotype (picklable, for workers);
    the batch is the scorer's own, on the CPU."""

    space: SearchSpace
    settings: PoolSettings
    metric: Metric | None
    kernel: KernelSpec
    x: torch.Tensor
    y: torch.Tensor
    #: ``space.build`` options: the settings' over what the batch's data decides.
    build: dict[str, Any]
    num_classes: int


def score_pool_chunk(job: PoolJob, chunk: list[tuple[Genotype, float | None]]) -> list[PoolMetrics]:
    """(M, κ) of each (genotype, known κ or None) of ``chunk``, in order; a network that
    fails to build or score gets NaN. The one scoring function of every runner (and of
    :meth:`PoolScorer.score`)."""
    s = job.settings
    ctx = MetricContext(device=s.device, num_classes=job.num_classes, seed=s.init_seed)
    batch = (job.x.to(s.device), job.y.to(s.device))
    out: list[PoolMetrics] = []
    for g, known in chunk:
        start = time.perf_counter()
        try:
            model = seeded_build(functools.partial(job.space.build, g, **job.build), s.init_seed)
            model = model.to(s.device).train()
            metric, kappa = measure(model, batch, spec=job.kernel, metric=job.metric, ctx=ctx, kappa=known)
        except (RuntimeError, ValueError):  # flagged as NaN; one bad net must not stop a pool
            metric, kappa = math.nan, math.nan
        out.append(PoolMetrics(metric, kappa, time.perf_counter() - start))
    return out


def unfit_for_m(info: MetricInfo) -> str | None:
    """Why a metric cannot be HNAS's M, or None if it can.

    The score reads M as a magnitude that grows with the architecture's gradient or kernel
    (realizable: arg-max M; non-realizable: κ/M + μF(M² − ν)), taken as |M|. A metric
    whose better values are lower, or whose values are never positive (|M| would then rank
    in reverse), or that only ranks a population, has no such reading.
    """
    if info.population:
        return "it ranks a population and has no value for one network"
    if not info.higher_is_better:
        return "lower is better, and M must grow with the quantity it measures (HNAS ranks by large |M|)"
    if info.sign == "nonpositive":
        return "its values are never positive, so |M| would rank architectures in reverse"
    return None


def pool_key(space: SearchSpace, settings: PoolSettings, metric_version: str | None) -> str:
    """The cache key of a pool's scores: the settings, and the versions of the code that
    makes the numbers (space, metric, nasforge), so an upgrade never serves old scores."""
    text = json.dumps(
        [settings.digest(space.name), space.version, metric_version, str(nasforge.__version__)],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_genotypes(space: SearchSpace, n: int, rng: random.Random) -> list[Genotype]:
    """``n`` uniform draws with replacement (as the authors' pool sampler), from ``rng``."""
    return [space.sample(rng) for _ in range(n)]

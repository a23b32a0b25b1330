"""A pool of architectures ranked by training-free scores: what a pre-ranking strategy,
a warm start or Eigen-NAS asks for before its first proposal.

The pool is scored as ``nasforge score`` scores it (:func:`~nasforge.tools.scoring.score_genotypes`:
the same batch from the same settings, networks from the same seed) and through the same
shared score cache (:func:`~nasforge.tools.scoring.cache.default_cache_dir`), so scores a
``nasforge correlate --all`` left there are read back, not computed again: with the same
metric, seed, data and build options, a search after it pays for scoring once. The sweep
runs where the caller says (:func:`~nasforge.tools.scoring.parallel.sweep_for`: the run's
``--executor``/``--workers``), which changes where the numbers are computed, never them.

Several metrics, or one metric under several initialisation seeds, are combined by their
mean normalised rank (:func:`~nasforge.tools.scoring.ranking.aggregate_ranks`): proxies live
on incomparable scales, and ranks are what a ranking needs. One metric under one seed
ranks by its own value. NaN, infinite or failed scores rank last; ties keep pool order.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from attrs import validators as v

from nasforge.kernel.converters import to_dict
from nasforge.kernel.datasets import TensorData
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import SearchSpace
from nasforge.tools.scoring.cache import ScoreCache, default_cache_dir
from nasforge.tools.scoring.parallel import SweepExecutor, sweep_for
from nasforge.tools.scoring.ranking import aggregate_ranks, oriented, rank_order
from nasforge.tools.scoring.scorer import metric_label
from nasforge.tools.scoring.sweep import resolve_metrics, score_genotypes

#: ``progress(done, total)`` over every (seed, genotype) of the ranking.
Progress = Callable[[int, int], object]
#: The shared cache (True), none (False or None), a directory, or a cache object.
CacheChoice = bool | str | os.PathLike[str] | ScoreCache | None


def _names(value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"metrics must be one or more metric names, got {value!r}")
    return tuple(dict.fromkeys(names))


def _seeds(value: Any) -> tuple[int, ...]:
    seeds = (value,) if isinstance(value, int) else tuple(value)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ValueError(f"init_seeds must be one or more integers >= 0, got {value!r}")
    return tuple(dict.fromkeys(seeds))


def _data_source(_inst: Any, _attr: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, TensorData) or (isinstance(value, str) and value):
        return
    raise ValueError(f"data must be a dataset name or data in memory, got {value!r}")


@attrs.frozen
class RankingSettings:
    """How a pool is scored: ``nasforge score``'s settings, so equal settings share the cache.

    ``seeds`` are the networks' (and the batch's) initialisation seeds, ``--seed`` of the
    CLI; with several, each architecture's ranks under them are averaged.
    """

    metrics: tuple[str, ...] = attrs.field(converter=_names)
    seeds: tuple[int, ...] = attrs.field(default=(0,), converter=_seeds)
    #: The batch's source: a dataset name (``gaussian``: data-agnostic) or data in memory
    #: (a run's training data).
    data: str | TensorData = attrs.field(default="gaussian", validator=_data_source)
    batch_size: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(1)])
    labels: str = attrs.field(default="true", validator=v.in_(("true", "random")))
    build: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    device: str = attrs.field(default="cpu", validator=v.min_len(1))
    chunk_size: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(1)])

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["metrics"], data["seeds"], data["build"] = list(self.metrics), list(self.seeds), dict(self.build)
        if isinstance(self.data, TensorData):  # data in memory is named by its name and content
            data["data"] = f"{self.data.name} (digest {self.data.digest()})"
        return data


@attrs.frozen
class Ranking:
    """A pool best first, with each member's combined score (larger is better: the metric's
    value turned so for one column, the mean normalised rank in [0, 1] for several)."""

    genotypes: tuple[Genotype, ...]
    scores: tuple[float, ...]
    #: Each ranked column (``metric@seed``) and its raw values, in :attr:`genotypes` order.
    columns: dict[str, tuple[float, ...]]
    #: Wall seconds of the scoring, cache reads included.
    seconds: float
    #: Scores computed by this ranking (the rest came from the cache).
    computed: int

    def top(self, k: int) -> list[Genotype]:
        return list(self.genotypes[:k])

    def __len__(self) -> int:
        return len(self.genotypes)


def resolve_cache(cache: CacheChoice) -> ScoreCache | None:
    """The cache a choice names (see :data:`CacheChoice`)."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return ScoreCache(default_cache_dir())
    if isinstance(cache, ScoreCache):
        return cache
    return ScoreCache(Path(cache))


def rank_pool(
    space: SearchSpace,
    genotypes: Sequence[Genotype],
    settings: RankingSettings,
    *,
    registry: Registry | None = None,
    parallelism: Parallelism | None = None,
    runner: SweepExecutor | None = None,
    cache: CacheChoice = True,
    progress: Progress | None = None,
) -> Ranking:
    """``genotypes`` scored under every metric and seed of ``settings`` and ranked.

    The sweep runs on ``runner`` (the caller's, left open) or on one made for
    ``parallelism`` (started only if something is not cached, closed here).
    """
    pool = list(dict.fromkeys(genotypes))
    metrics = resolve_metrics(settings.metrics, registry=registry)
    # the metrics named, in order (a rank ensemble's members come first, unnamed: not ranked by)
    wanted = {metric_label(m): m.info.higher_is_better for m in metrics[-len(settings.metrics) :]}
    store = resolve_cache(cache)
    sweep = runner if runner is not None else sweep_for(parallelism, registry)
    start, columns, directions, computed = time.perf_counter(), {}, [], 0
    total = len(pool) * len(settings.seeds)
    try:
        for k, seed in enumerate(settings.seeds):
            table = score_genotypes(
                space,
                pool,
                metrics,
                data=settings.data,
                batch_size=settings.batch_size,
                labels=settings.labels,
                seed=seed,
                device=settings.device,
                chunk_size=settings.chunk_size,
                build=settings.build,
                cache=store,
                registry=registry,
                executor=sweep,
                progress=None if progress is None else _offset(progress, k * len(pool), total),
            )
            for label, higher in wanted.items():
                scores = table.column(label)
                computed += sum(not s.cached for s in scores)
                columns[f"{label}@{seed}"] = tuple(float(s.value) if s.ok else float("nan") for s in scores)
                directions.append(higher)
    finally:
        if sweep is not runner:
            sweep.close()
    combined = _combined(list(columns.values()), directions)
    order = rank_order(combined, True)
    return Ranking(
        genotypes=tuple(pool[i] for i in order),
        scores=tuple(float(combined[i]) for i in order),
        columns={name: tuple(values[i] for i in order) for name, values in columns.items()},
        seconds=time.perf_counter() - start,
        computed=computed,
    )


def _combined(columns: list[tuple[float, ...]], directions: list[bool]) -> np.ndarray:
    if len(columns) == 1:
        return oriented(columns[0], directions[0])
    return aggregate_ranks(columns, directions)


def _offset(progress: Progress, before: int, total: int) -> Callable[[int, int, Genotype], object]:
    return lambda done, _n, _g: progress(before + done, total)


__all__ = ["CacheChoice", "Ranking", "RankingSettings", "rank_pool", "resolve_cache"]

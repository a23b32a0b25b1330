"""Eigen-NAS's candidate pool: draw it, score it training-free, rank it.

Scoring goes through the core's scorer (:func:`nasforge.tools.scoring.score_genotypes`): each
candidate built from the same initialisation seed, scored on one fixed batch in train
mode, through the shared-pass kernels (so ``eigennas_trace`` and KNAS's MGM cost one
Jacobian together) and the disk score cache, keyed by the metric's name and version, the
batch's hash, the build options, the seed and nasforge's version. Nothing here depends on
the space beyond ``sample``/``enumerate``/``build``: NAS-Bench-201 cells and ``mlp-res``
networks are scored the same way.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import attrs

from nasforge.kernel.datasets import TensorData, build_option_names, network_options
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import ENUMERATE, SearchSpace
from nasforge.tools.scoring import (
    ScoreTable,
    SweepExecutor,
    fixed_batch,
    resolve_cache,
    resolve_metrics,
    score_genotypes,
)
from nasforge_eigennas.settings import ScoreSettings

Progress = Callable[[int, int], object]
#: Uniform draws per wanted candidate before a sample settles for fewer distinct ones.
DRAWS_PER_CANDIDATE = 50


def draw_candidates(space: SearchSpace, n: int, rng: random.Random) -> list[Genotype]:
    """``n`` distinct candidates: the whole space when it is enumerable and no larger,
    else uniform draws without repeats (from ``rng`` alone, so a seed fixes the pool)."""
    size = space.size
    if ENUMERATE in space.capabilities and size is not None and size <= n:
        return list(space.enumerate())
    seen: dict[Genotype, None] = {}
    for _ in range(DRAWS_PER_CANDIDATE * n):
        seen.setdefault(space.sample(rng))
        if len(seen) == n:
            break
    return list(seen)


def scoring_batch(
    settings: ScoreSettings, registry: Registry | None, dataset: TensorData | None = None
) -> TensorData:
    """The one batch every candidate is scored on: drawn from ``dataset`` (the run's data)
    when given, else Gaussian of ``input_shape`` or a named dataset's, with the init seed."""
    s = settings
    options: dict[str, Any] = {}
    if dataset is None and s.data == "gaussian":
        options = {"shape": s.input_shape, "num_classes": s.num_classes, "n": s.batch_size}
    source = dataset if dataset is not None else s.data
    fb = fixed_batch(source, batch_size=s.batch_size, seed=s.init_seed, registry=registry, **options)
    return TensorData(fb.source, fb.x, fb.y, fb.num_classes)


def build_options(space: SearchSpace, settings: ScoreSettings, batch: TensorData) -> dict[str, Any]:
    """The settings' build options over what the data decides (classes, channels), where
    ``space.build`` takes them (any name if it takes ``**cfg``)."""
    options = network_options(batch.input_shape, batch.num_classes, accepted=build_option_names(space))
    return {**options, **settings.build}


def cache_directory(root: str | Path, space: SearchSpace) -> Path:
    """A cache shard per space configuration: a space's options (e.g. mlp-res's LeakyReLU
    slope) change its networks without changing its genotypes, so they key the directory."""
    config = json.dumps([space.name, space.version, vars(space)], sort_keys=True, default=repr)
    return Path(root) / f"{space.name}-{hashlib.sha256(config.encode()).hexdigest()[:12]}"


def score_candidates(
    space: SearchSpace,
    genotypes: Sequence[Genotype],
    settings: ScoreSettings,
    *,
    metrics: Sequence[str] | None = None,
    dataset: TensorData | None = None,
    registry: Registry | None = None,
    cache: str | Path | bool | None = None,
    progress: Progress | None = None,
    executor: SweepExecutor | None = None,
) -> ScoreTable:
    """Every candidate under ``settings.metric`` (and any further ``metrics``, sharing passes),
    on a batch of ``dataset`` (the run's data) if given, else of ``settings.data``, on
    ``executor`` (the caller's; None: this process); ``cache``: True for the shared score
    cache (whose keys hold the space's options), a directory (a shard per space
    configuration), or None/False for none."""
    names = list(dict.fromkeys([settings.metric, *(metrics or ())]))
    batch = scoring_batch(settings, registry, dataset)
    return score_genotypes(
        space,
        list(genotypes),
        resolve_metrics(names, registry=registry),
        data=batch,
        batch_size=len(batch),
        labels=settings.labels,
        seed=settings.init_seed,
        device=settings.device,
        chunk_size=settings.chunk_size,
        build=build_options(space, settings, batch),
        cache=resolve_cache(cache)
        if cache in (None, True, False)
        else cache_directory(cast("str | Path", cache), space),
        progress=None if progress is None else (lambda done, total, _g: progress(done, total)),
        registry=registry,
        executor=executor if executor is not None else "inprocess",
    )


@attrs.frozen
class Ranked:
    """One candidate with its score and place (0 = best)."""

    genotype: Genotype
    score: float
    rank: int
    seconds: float
    error: str | None = None


def rank_candidates(table: ScoreTable, label: str, higher_is_better: bool) -> list[Ranked]:
    """Candidates best first; NaN and infinite scores last; ties keep the draw order."""
    rows = []
    for i, (g, row) in enumerate(zip(table.genotypes, table.rows, strict=True)):
        s = row[label]
        value = float(s.value)
        finite = math.isfinite(value)
        key = (0 if finite else 1, -value if (finite and higher_is_better) else (value if finite else 0.0), i)
        rows.append((key, g, value, float(s.seconds), s.error))
    rows.sort(key=lambda r: r[0])
    return [Ranked(g, value, k, seconds, error) for k, (_, g, value, seconds, error) in enumerate(rows)]

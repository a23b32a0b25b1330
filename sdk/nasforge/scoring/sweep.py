"""Score many genotypes of a space: build each with a fixed seed, score, cache."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from nasforge.backends.device import resolve_device
from nasforge.genotype import Genotype
from nasforge.metric import Metric, MetricContext, MetricInfo, PopulationMetric
from nasforge.registry import Registry, get_registry
from nasforge.scoring.batch import DataSpec, fixed_batch
from nasforge.scoring.cache import ScoreCache, ScoreKey
from nasforge.scoring.outcome import MetricScore
from nasforge.scoring.scorer import metric_label, score_model
from nasforge.scoring.table import ScoreTable
from nasforge.search_space import SearchSpace, build_network
from nasforge.seeding import seeded_build

MetricSpec = str | Metric
Progress = Callable[[int, int, Genotype], None]


def resolve_metrics(metrics: Iterable[MetricSpec], *, registry: Registry | None = None) -> list[Metric]:
    """Metric instances from names (through ``registry``, the process-wide default if
    None) or instances as given. A metric class that declares a ``registry`` parameter
    (one made of other metrics, named) is given the same registry."""
    out: list[Metric] = []
    for m in metrics:
        if isinstance(m, str):
            registry = registry if registry is not None else get_registry()
            out.append(_instance(registry.get("metric", m), registry))
        else:
            out.append(m)
    # population metrics need their members scored first
    labels = {metric_label(m) for m in out}
    for m in list(out):
        for member in m.members if isinstance(m, PopulationMetric) else ():
            if metric_label(member) not in labels:
                out.insert(0, member)
                labels.add(metric_label(member))
    return out


def _instance(cls: Any, registry: Registry) -> Metric:
    try:
        takes_registry = "registry" in inspect.signature(cls).parameters
    except (TypeError, ValueError):  # no introspectable signature
        takes_registry = False
    return cls(registry=registry) if takes_registry else cls()


def build_model(space: SearchSpace, g: Genotype, *, seed: int, build: dict[str, Any]) -> torch.nn.Module:
    """The network of ``g``, initialised from ``seed`` alone: the same init for any sweep
    order and whatever other threads do with torch's global generator."""
    return seeded_build(lambda: build_network(space, g, build), seed)


def score_genotypes(
    space: SearchSpace,
    genotypes: Sequence[Genotype],
    metrics: Sequence[MetricSpec],
    *,
    data: DataSpec = "gaussian",
    batch_size: int = 64,
    labels: str = "true",
    seed: int = 0,
    device: str = "cpu",
    chunk_size: int = 64,
    loss: str = "cross_entropy",
    build: dict[str, Any] | None = None,
    cache: ScoreCache | str | os.PathLike[str] | None = None,
    shared: bool = True,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> ScoreTable:
    """Score every genotype under every metric; never raises for a bad architecture.

    Each network is built from ``seed`` and scored on one fixed batch in train mode
    (``labels="random"`` for the label-agnostic mode; ``data="gaussian"`` is data-agnostic).
    Cached scores are reused when genotype, metric (label and declared version), nasforge
    version, loss, device type, seed, batch hash and build options all match. Population
    metrics (``info.population``, e.g. the rank ensemble) are filled in at the end by their
    ``aggregate(columns, infos)`` from their ``members``' columns. Metric and dataset
    names resolve through ``registry`` (the process-wide default if None).
    """
    instances = resolve_metrics(metrics, registry=registry)
    fb = fixed_batch(data, batch_size=batch_size, seed=seed, labels=labels, registry=registry)
    build = dict(build or {})
    build_key = json.dumps(build, sort_keys=True, default=str)
    store = ScoreCache(cache) if isinstance(cache, str | os.PathLike) else cache
    device = str(resolve_device(device))  # a bad or unavailable device: one line, before any work
    ctx = MetricContext(
        device=device, num_classes=fb.num_classes, seed=seed, chunk_size=chunk_size, loss=loss
    )
    x, y = fb.x.to(device), fb.y.to(device)
    per_model = [m for m in instances if not m.info.population]
    labels = [metric_label(m) for m in instances]
    # data-free metrics depend on the input shape only: their cache entries serve any data
    shape_key = "shape:" + "x".join(str(d) for d in fb.x.shape[1:])
    # the loss and the device type change the numbers too (a CUDA score is not a CPU one)
    settings = json.dumps({"loss": loss, "device": torch.device(device).type}, sort_keys=True)
    keys = {
        metric_label(m): ScoreKey(
            metric_label(m),
            seed,
            fb.digest() if m.info.needs_data else shape_key,
            build_key,
            version=m.info.version,
            settings=settings,
        )
        for m in per_model
    }
    rows: list[dict[str, MetricScore]] = []
    try:
        for i, g in enumerate(genotypes):
            space.validate(g)
            row: dict[str, MetricScore] = {}
            todo: list[Metric] = []
            for m in per_model:
                label = metric_label(m)
                hit = store.get(keys[label], g) if store is not None else None
                if hit is not None:
                    row[label] = hit
                else:
                    todo.append(m)
            if todo:
                model = build_model(space, g, seed=seed, build=build).to(device).train()
                fresh = score_model(model, (x, y), todo, ctx=ctx, shared=shared)
                for label, score in fresh.items():
                    row[label] = score
                    if store is not None:
                        store.put(keys[label], g, score)
            rows.append(row)
            if progress is not None:
                progress(i + 1, len(genotypes), g)
    finally:  # an interrupted sweep keeps what it scored
        if store is not None:
            store.flush()
    infos: dict[str, MetricInfo] = {metric_label(m): m.info for m in instances}
    for m in instances:
        if isinstance(m, PopulationMetric):
            label = metric_label(m)
            values = m.aggregate({k: [r[k] for r in rows] for k in rows[0]} if rows else {}, infos)
            for r, v in zip(rows, np.asarray(values, dtype=float), strict=True):
                r[label] = MetricScore(label, float(v))
    return ScoreTable(tuple(genotypes), tuple(labels), infos, tuple(rows), fb.describe())

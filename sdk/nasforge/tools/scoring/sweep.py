"""Score many genotypes of a space: build each with a fixed seed, score, cache.

The building and scoring run wherever the caller says (:mod:`nasforge.tools.scoring.parallel`),
through one function, :func:`score_chunk`, so the numbers cannot depend on the runner;
the cache is read before and written after, in the calling process only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np
import torch

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import BuildOptionError, OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Metric, MetricContext, MetricInfo, PopulationMetric
from nasforge.kernel.network_factory import (
    NetworkFactory,
    SeededNetworkFactory,
    build_network,
)
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.run.construction import build_component
from nasforge.tools.scoring.batch import DataSpec, fixed_batch
from nasforge.tools.scoring.cache import ScoreCache, ScoreKey, space_config
from nasforge.tools.scoring.factories import thread_factory as _factory
from nasforge.tools.scoring.outcome import MetricScore, unbuilt_scores
from nasforge.tools.scoring.parallel import (
    InProcessSweep,
    ProcessSweep,
    SweepExecutor,
    available_cpus,
    make_sweep_executor,
    map_chunks,
)
from nasforge.tools.scoring.pipeline import StageTimes, run_pipeline, stacking_for
from nasforge.tools.scoring.scorer import metric_label, score_model
from nasforge.tools.scoring.table import ScoreTable

MetricSpec = str | Metric
Progress = Callable[[int, int, Genotype], object]


def resolve_metrics(metrics: Iterable[MetricSpec], *, registry: Registry | None = None) -> list[Metric]:
    """Metric instances from names (through ``registry``, the process-wide default if
    None) or instances as given, each built through its ``from_context`` hook with a run
    context holding that registry (a metric made of other metrics, named, declares it)."""
    out: list[Metric] = []
    for m in metrics:
        if isinstance(m, str):
            registry = registry if registry is not None else get_registry()
            context = RunContext(registry=registry)
            plugin = registry.origin("metric", m)
            out.append(build_component("metric", registry.get("metric", m), context, {}, plugin=plugin))
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


def build_model(space: SearchSpace, g: Genotype, *, seed: int, build: dict[str, Any]) -> torch.nn.Module:
    """The network of ``g``, initialised from ``seed`` alone: the same init for any sweep
    order and whatever other threads do with torch's global generator."""
    return seeded_build(lambda: build_network(space, g, build), seed)


def _sweep_factory(space: SearchSpace, build: dict[str, Any], device: str) -> NetworkFactory:
    """The space's fast factory on the CPU (it re-draws weights in place, on the CPU; made
    once per process and reused); a fresh seeded build elsewhere. Both give the same
    network, so the same scores."""
    if torch.device(str(device)).type == "cpu":
        return _factory(space, build)
    return SeededNetworkFactory(space, build)


def prepare_sweep(
    space: SearchSpace, build: dict[str, Any] | None, device: str = "cpu"
) -> Callable[[], None]:
    """What a process pool forked for a sweep of ``space``'s networks should inherit: this
    process's network factory for ``build``, made once before the fork (each worker made
    its own while the sweep waited). Pass it as ``make_sweep_executor(..., prepare=...)``.
    (On a GPU the workers build on the CPU for the scoring process: the CPU factory.)"""

    def prepare() -> None:
        _factory(space, dict(build or {}))
        _sweep_factory(space, dict(build or {}), device)

    return prepare


@attrs.frozen(eq=False)
class ScoreJob:
    """What every genotype of one sweep shares, shipped once per task to whatever scores it.

    The batch tensors are the parent's own (on the CPU, moved to ``ctx.device`` by the
    worker), so a worker never redraws them and cannot score on different data.
    """

    space: SearchSpace
    #: The per-network metrics of the sweep (population metrics are the parent's job).
    metrics: tuple[Metric, ...] = attrs.field(converter=to_tuple)
    x: torch.Tensor
    y: torch.Tensor
    ctx: MetricContext
    seed: int
    build: dict[str, Any]
    shared: bool = True


#: One item of a chunk: a genotype and the labels of the metrics it still needs.
ChunkItem = tuple[Genotype, tuple[str, ...]]


def score_chunk(job: ScoreJob, chunk: list[ChunkItem]) -> list[dict[str, MetricScore]]:
    """Scores of each genotype of ``chunk`` under the metrics it names, in order: the one
    function every runner calls, in this process or in a worker."""
    by_label = {metric_label(m): m for m in job.metrics}
    device = job.ctx.device
    batch = (job.x.to(device), job.y.to(device))
    on_cpu = torch.device(device).type == "cpu"
    factory = _sweep_factory(job.space, job.build, device)
    out: list[dict[str, MetricScore]] = []
    for g, labels in chunk:
        try:
            model = factory.build(g, job.seed)
        except Exception as exc:  # one network that cannot be built must not end the sweep
            out.append(unbuilt_scores(labels, exc))
            continue
        if not on_cpu:  # (a walk over every module: not for nothing)
            model = model.to(device)
        out.append(score_model(model, batch, [by_label[k] for k in labels], ctx=job.ctx, shared=job.shared))
    return out


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
    executor: SweepExecutor | str = "inprocess",
    workers: int | None = None,
    executor_options: dict[str, Any] | None = None,
    per_task: int | None = None,
    pipeline: bool | None = None,
    stack: int | None = None,
    stages: StageTimes | None = None,
) -> ScoreTable:
    """Score every genotype under every metric; never raises for a bad architecture.

    Each network is built from ``seed`` and scored on one fixed batch in train mode
    (``labels="random"`` for the label-agnostic mode; ``data="gaussian"`` is data-agnostic).
    Cached scores are reused when genotype, metric (label and declared version), nasforge
    version, loss, device type, seed, batch hash and build options all match. Population
    metrics (``info.population``, e.g. the rank ensemble) are filled in at the end by their
    ``aggregate(columns, infos)`` from their ``members``' columns. Metric and dataset
    names resolve through ``registry`` (the process-wide default if None).

    ``executor`` says where the networks are built and scored (:mod:`nasforge.tools.scoring.parallel`):
    ``"inprocess"`` (default), ``"process"`` (``workers`` local processes), a registered
    executor's name (the Ray plugin's ``ray``: ``workers`` CPUs of a local Ray instance, or
    a cluster, with ``executor_options={"address": ...}``), or a
    :class:`~nasforge.tools.scoring.parallel.SweepExecutor` the caller made (and closes). Every
    runner gives the same scores: the same networks from the same seed on the same batch.
    ``per_task`` genotypes travel per task (default: a few chunks per worker). The cache
    is read and written here, in the calling process, only.

    On a GPU (``device="cuda"``) a sweep in this process or a local pool is a pipeline
    (:mod:`nasforge.tools.scoring.pipeline`): the ``workers`` processes build the networks
    on the CPU and this process alone scores them on the device, never one CUDA context
    per worker (in this process, a large sweep starts builder processes of its own, a
    small one builds in a thread); ``pipeline=True`` runs it on the CPU too (the same
    scores as any runner), ``False`` never. In the pipeline, where the space offers
    network stacks, ``stack`` networks are scored at once as one module by the metrics
    that score stacks (None: on a GPU the data-free ones, none on the CPU; 0: none);
    their scores equal one network's up to rounding, and are cached apart. ``stages``, if
    given, collects where the pipeline's time went.
    """
    runner = (
        executor
        if isinstance(executor, SweepExecutor)
        else make_sweep_executor(
            executor,
            workers=workers,
            options=dict(executor_options or {}),
            registry=registry,
        )
    )
    try:
        return _score(
            space,
            genotypes,
            metrics,
            data=data,
            batch_size=batch_size,
            labels=labels,
            seed=seed,
            device=device,
            chunk_size=chunk_size,
            loss=loss,
            build=build,
            cache=cache,
            shared=shared,
            progress=progress,
            registry=registry,
            runner=runner,
            per_task=per_task,
            pipeline=pipeline,
            stack=stack,
            stages=stages,
        )
    finally:
        if runner is not executor:
            runner.close()


def _score(
    space: SearchSpace,
    genotypes: Sequence[Genotype],
    metrics: Sequence[MetricSpec],
    *,
    data: DataSpec,
    batch_size: int,
    labels: str,
    seed: int,
    device: str,
    chunk_size: int,
    loss: str,
    build: dict[str, Any] | None,
    cache: ScoreCache | str | os.PathLike[str] | None,
    shared: bool,
    progress: Progress | None,
    registry: Registry | None,
    runner: SweepExecutor,
    per_task: int | None,
    pipeline: bool | None = None,
    stack: int | None = None,
    stages: StageTimes | None = None,
) -> ScoreTable:
    instances = resolve_metrics(metrics, registry=registry)
    fb = fixed_batch(data, batch_size=batch_size, seed=seed, labels=labels, registry=registry)
    build = dict(build or {})
    store = ScoreCache(cache) if isinstance(cache, str | os.PathLike) else cache
    device = str(resolve_device(device))  # a bad or unavailable device: one line, before any work
    ctx = MetricContext(
        device=device, num_classes=fb.num_classes, seed=seed, chunk_size=chunk_size, loss=loss
    )
    per_model = [m for m in instances if not m.info.population]
    columns = [metric_label(m) for m in instances]
    piped, stack_size, in_stacks = _pipeline_plan(space, per_model, device, runner, pipeline, stack, shared)
    keys = _score_keys(space, per_model, fb, build, seed, loss, device, in_stacks)
    for g in genotypes:  # a foreign genotype fails before any work, not after hours of it
        space.validate(g)
    total = len(genotypes)
    rows: list[dict[str, MetricScore]] = [{} for _ in genotypes]
    todo: list[int] = []
    for i, g in enumerate(genotypes):
        for m in per_model:
            label = metric_label(m)
            hit = store.get(keys[label], g) if store is not None else None
            if hit is not None:
                rows[i][label] = hit
        if len(rows[i]) < len(per_model):
            todo.append(i)
    done = total - len(todo)
    if progress is not None and done and genotypes:
        progress(done, total, genotypes[-1])
    job = ScoreJob(space, per_model, fb.x.cpu(), fb.y.cpu(), ctx, seed, build, shared)
    items: list[ChunkItem] = [
        (genotypes[i], tuple(metric_label(m) for m in per_model if metric_label(m) not in rows[i]))
        for i in todo
    ]

    def finished(chunk: list[ChunkItem], results: list[dict[str, MetricScore]]) -> None:
        nonlocal done
        for (g, _), fresh in zip(chunk, results, strict=True):
            for label, score in fresh.items():
                if store is not None and not score.unbuilt:
                    store.put(keys[label], g, score)
        done += len(chunk)
        if progress is not None:
            progress(done, total, chunk[-1][0])

    try:
        if piped:
            with _builders(runner, space, build, device, len(items)) as builders:
                scored = run_pipeline(
                    builders,
                    job,
                    items,
                    stack=stack_size,
                    stacked=in_stacks,
                    on_chunk=finished,
                    times=stages,
                )
        else:
            scored = map_chunks(runner, score_chunk, job, items, per_task=per_task, on_chunk=finished)
    finally:  # an interrupted sweep keeps what it scored
        if store is not None:
            store.flush()
    for i, fresh in zip(todo, scored, strict=True):
        rows[i].update(fresh)
        rows[i] = {metric_label(m): rows[i][metric_label(m)] for m in per_model}
    _refuse_if_none_built(space, genotypes, rows)
    infos: dict[str, MetricInfo] = {metric_label(m): m.info for m in instances}
    for m in instances:
        if isinstance(m, PopulationMetric):
            label = metric_label(m)
            values = m.aggregate({k: [r[k] for r in rows] for k in rows[0]} if rows else {}, infos)
            for r, v in zip(rows, np.asarray(values, dtype=float), strict=True):
                r[label] = MetricScore(label, float(v))
    return ScoreTable(tuple(genotypes), tuple(columns), infos, tuple(rows), fb.describe())


def _refuse_if_none_built(
    space: SearchSpace, genotypes: Sequence[Genotype], rows: list[dict[str, MetricScore]]
) -> None:
    """Not one network could be built: the options (or the space) are wrong for all of
    them, which is the caller's error in one line, not a table of failures."""
    unbuilt = [i for i, row in enumerate(rows) if row and all(s.unbuilt for s in row.values())]
    if not genotypes or len(unbuilt) < len(genotypes):
        return
    error = next(iter(rows[0].values())).error or ""
    first = space.format(genotypes[0])
    raise BuildOptionError(f"no network could be built ({len(genotypes)} tried); the first, {first}: {error}")


def _score_keys(
    space: SearchSpace,
    metrics: Sequence[Metric],
    fb: Any,
    build: dict[str, Any],
    seed: int,
    loss: str,
    device: str,
    stacked: frozenset[str],
) -> dict[str, ScoreKey]:
    """Each metric's cache key: everything its scores depend on besides the genotype."""
    # data-free metrics depend on the input shape only: their cache entries serve any data
    shape_key = "shape:" + "x".join(str(d) for d in fb.x.shape[1:])
    # the loss and the device type change the numbers too (a CUDA score is not a CPU one)
    setting: dict[str, str] = {"loss": loss, "device": torch.device(device).type}
    if setting["device"] == "cuda":  # scores before exact_float32 were TF32's: never serve those
        setting["float32"] = "exact"
    own = space_config(space)
    if own:  # a space's options change its networks (an option-free space keys as before)
        setting["space"] = own
    settings = json.dumps(setting, sort_keys=True)
    # a stack's scores equal one network's up to rounding: kept apart from one network's
    in_stacks = json.dumps({**setting, "stack": "grouped"}, sort_keys=True)
    return {
        metric_label(m): ScoreKey(
            metric_label(m),
            seed,
            fb.digest() if m.info.needs_data else shape_key,
            json.dumps(build, sort_keys=True, default=str),
            version=m.info.version,
            settings=_own_settings(m, in_stacks if metric_label(m) in stacked else settings),
        )
        for m in metrics
    }


def _own_settings(metric: Metric, settings: str) -> str:
    """``settings``, and for a metric from outside nasforge its class: two packages'
    metrics of one name (``zerocost:synflow``, ``trial:synflow``) never share cached
    scores. First-party metrics cannot clash among themselves and keep their keys."""
    cls = type(metric)
    if cls.__module__.startswith(("nasforge.", "nasforge_")):
        return settings
    return json.dumps(
        {**json.loads(settings), "class": f"{cls.__module__}.{cls.__qualname__}"}, sort_keys=True
    )


def _pipeline_plan(
    space: SearchSpace,
    metrics: Sequence[Metric],
    device: str,
    runner: SweepExecutor,
    pipeline: bool | None,
    stack: int | None,
    shared: bool,
) -> tuple[bool, int, frozenset[str]]:
    """Whether the sweep runs as a device pipeline, its networks per stack (0: none) and
    the metrics scored in stacks.

    Automatic on a GPU for this process and a local pool (a registered executor's workers
    each score where they run); asked for, it needs one of those two."""
    local = isinstance(runner, InProcessSweep | ProcessSweep)
    if pipeline and not local:
        raise OptionError(
            f"the device pipeline builds in this process or a local pool, not on the {runner.name} executor"
        )
    size, labels = stacking_for(space, metrics, stack, device) if shared else (0, frozenset())
    piped = pipeline if pipeline is not None else local and (torch.device(device).type != "cpu" or size > 0)
    return (piped, size, labels) if piped else (False, 0, frozenset())


#: A GPU sweep in this process builds in processes of its own from this many networks on:
#: one builder thread makes ~200-300 NAS-Bench-201 networks a second, which a stacked
#: synflow sweep outruns several times over.
AUTO_BUILDERS_FROM = 256
#: At most this many automatic builder processes (one CPU stays with the scoring process).
AUTO_BUILDERS_MAX = 16


@contextlib.contextmanager
def _builders(
    runner: SweepExecutor, space: SearchSpace, build: dict[str, Any], device: str, count: int
) -> Iterator[ProcessSweep | None]:
    """Who builds a pipeline's networks: the caller's pool; on a GPU, for a sweep of
    :data:`AUTO_BUILDERS_FROM` networks or more, a pool of this machine's CPUs but one
    (made here, closed after); else one thread of this process (None)."""
    if isinstance(runner, ProcessSweep):
        yield runner
        return
    cpus = available_cpus()
    if torch.device(device).type == "cpu" or count < AUTO_BUILDERS_FROM or cpus < 2:
        yield None
        return
    pool = ProcessSweep(min(cpus - 1, AUTO_BUILDERS_MAX), prepare=prepare_sweep(space, build, device))
    with pool:
        yield pool

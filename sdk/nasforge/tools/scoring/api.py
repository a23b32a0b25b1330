"""The Python face of ``nasforge score`` and ``nasforge correlate``: names in, typed results out.

Each call takes what its command takes, by name (a space, metrics, an evaluator, a
dataset) and with the command's defaults, makes every check and refusal the command
makes, with one message (the settings it names spelled as a Python caller gives them
here, as flags on the command line: :func:`nasforge.run.advice.worded`), and returns
what the command prints. The commands only parse their flags, call these and print;
:mod:`nasforge.api` is the name to import them by.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.search_space import ENUMERATE, SearchSpace
from nasforge.run import defaults
from nasforge.run.advice import worded
from nasforge.run.defaults import default_component
from nasforge.tools.export.genotype_source import resolve_genotype
from nasforge.tools.scoring.batch import check_labels
from nasforge.tools.scoring.cache import default_cache_dir
from nasforge.tools.scoring.correlate import CorrelationResult, judging_evaluator, sample_genotypes
from nasforge.tools.scoring.correlate import correlate as correlate_with
from nasforge.tools.scoring.parallel import SweepExecutor, make_sweep_executor
from nasforge.tools.scoring.plot import plot_correlation, plot_format
from nasforge.tools.scoring.sweep import Progress, prepare_sweep, score_genotypes
from nasforge.tools.scoring.table import ScoreTable

#: Seeds seed torch generators, which take values of 0 .. 2**63 - 1.
MAX_SEED = 2**63 - 1
#: Architectures a correlation scores and looks up unless told otherwise.
DEFAULT_SAMPLE = defaults.CORRELATION_SAMPLE
#: Always scored beside the metrics a correlation is asked for: they are hard to beat
#: (NAS-Bench-Suite-Zero), so a metric is judged against them.
BASELINES = defaults.BASELINE_METRICS

#: How each face names the settings a refusal mentions: (Python, command line).
_SAMPLE = ("sample", "--sample")
_WHOLE_SPACE = ("whole_space=True", "--all")
_SEED = ("seed", "--seed")

CacheChoice = str | os.PathLike[str] | bool


@attrs.frozen
class Scores:
    """What :func:`score` returns: the table of scores and the space its genotypes are of."""

    space: SearchSpace
    table: ScoreTable

    def texts(self) -> list[str]:
        """Each row's genotype as the space writes it (what ``nasforge score`` prints)."""
        return [self.space.format(g) for g in self.table.genotypes]

    def failed(self) -> list[dict[str, Any]]:
        """The genotypes whose networks could not be built: ``{genotype, text, error}`` each
        (their scores are flagged; the sweep scored every other one)."""
        return [
            {
                "genotype": self.table.genotypes[i].to_json(),
                "text": self.space.format(self.table.genotypes[i]),
                "error": error,
            }
            for i, error in self.table.unbuilt()
        ]

    def to_json(self) -> dict[str, Any]:
        """The table's JSON with each row's genotype text, and the genotypes that could not
        be built: ``nasforge score --json``."""
        payload = self.table.to_json()
        for row, text in zip(payload["rows"], self.texts(), strict=True):
            row["text"] = text
        payload["failed"] = self.failed()
        return payload


def score(
    genotypes: Sequence[str | os.PathLike[str] | Genotype] = (),
    *,
    space: str | None = None,
    metrics: Sequence[str] | None = None,
    sample: int | None = None,
    whole_space: bool = False,
    data: str = "gaussian",
    batch_size: int = 64,
    labels: str = "true",
    seed: int = 0,
    device: str = "cpu",
    build_options: Mapping[str, Any] | None = None,
    cache: CacheChoice = True,
    executor: str = "inprocess",
    workers: int | None = None,
    executor_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> Scores:
    """Score architectures with training-free metrics (the Python twin of ``nasforge score``).

    What is scored: ``genotypes`` (genotype strings of ``space``, ``.safetensors`` files,
    run directories (their best) or :class:`~nasforge.Genotype` values), plus ``sample``
    random genotypes of the space drawn with ``seed``, plus every genotype of a finite
    space with ``whole_space``. ``space`` defaults to nb201, ``metrics`` to every
    registered one. Each network is built from ``seed`` and scored on one batch of
    ``data`` (``gaussian`` is data-agnostic; ``labels="random"`` the label-agnostic mode).

    ``cache``: True keeps scores in the default cache directory, a path in that one,
    False none; a rerun of cached scores costs nothing. ``executor``, ``workers`` and
    ``executor_options`` say where networks are built and scored (``process`` with N
    workers: N cores); the scores are the same. ``progress(done, total, genotype)`` hears
    each scored architecture. A NaN or infinite score is flagged in its
    :class:`~nasforge.tools.scoring.outcome.MetricScore`, never raised.
    """
    registry = registry if registry is not None else get_registry()
    check_seed(seed)
    check_labels(labels)  # every setting checked before an executor (a Ray instance) starts
    resolve_device(device)
    if sample is not None:
        _check_count(sample, 1, _SAMPLE)
    name = space or default_component(registry, "space", defaults.SPACE)
    sp = registry.get("space", name)()
    chosen = [_genotype(item, name, sp, registry) for item in genotypes]
    if sample:
        chosen += sample_genotypes(sp, sample, seed=seed)
    if whole_space:
        chosen += whole_space_of(sp)
    if not chosen:
        raise worded(
            NasforgeError,
            "give genotypes to score, or {sample} N, or {every}",
            sample=_SAMPLE,
            every=_WHOLE_SPACE,
        )
    names = metric_names(metrics, registry=registry)
    build = dict(build_options or {})
    runner = _sweep_runner(executor, workers, executor_options, registry, sp, build, device)
    with runner:
        table = score_genotypes(
            sp,
            chosen,
            names,
            data=data,
            batch_size=batch_size,
            labels=labels,
            seed=seed,
            device=device,
            build=build,
            cache=cache_directory(cache),
            progress=progress,
            registry=registry,
            executor=runner,
        )
    return Scores(sp, table)


def correlate(
    *,
    space: str | None = None,
    metrics: Sequence[str] | None = None,
    sample: int | None = None,
    whole_space: bool = False,
    evaluator: str | None = None,
    dataset: str | None = None,
    data: str = "gaussian",
    batch_size: int = 64,
    labels: str = "true",
    seed: int = 0,
    device: str = "cpu",
    build_options: Mapping[str, Any] | None = None,
    plot: str | os.PathLike[str] | None = None,
    cache: CacheChoice = True,
    executor: str = "inprocess",
    workers: int | None = None,
    executor_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> CorrelationResult:
    """Rank correlation of metrics with a benchmark (the Python twin of ``nasforge correlate``).

    ``sample`` random architectures of ``space`` (default nb201, 200 of them), or every
    one with ``whole_space``, are scored by ``metrics`` (default all; the size baselines
    params and flops are always added) and looked up by ``evaluator`` (default
    nb201-table, on ``dataset`` cifar10); the result holds each metric's Spearman and
    Kendall coefficient against what the evaluator reports. ``plot`` also draws the
    scatter to that file (png, svg or pdf, from its suffix; checked before any work).
    The scoring settings are those of :func:`score`.
    """
    registry = registry if registry is not None else get_registry()
    if plot is not None:
        plot_format(plot)  # a typo in the suffix fails now, not after the scoring
    check_seed(seed)
    check_labels(labels)  # every setting checked before an executor (a Ray instance) starts
    resolve_device(device)
    if whole_space and sample is not None:
        raise worded(
            NasforgeError, "give {sample} N or {every}, not both", sample=_SAMPLE, every=_WHOLE_SPACE
        )
    if sample is not None:
        _check_count(sample, 2, _SAMPLE)
    name = space or default_component(registry, "space", defaults.SPACE)
    judge = evaluator or default_component(registry, "evaluator", defaults.TABLE_EVALUATOR)
    if dataset is None and judge == defaults.TABLE_EVALUATOR:
        dataset = defaults.TABLE_DATASET
    sp = registry.get("space", name)()
    if sp.size is None:
        raise NasforgeError(
            f"space '{name}' is not finite: a correlation needs a benchmark space such as {defaults.SPACE}"
        )
    pool = whole_space_of(sp) if whole_space else None
    names = metric_names(metrics, with_baselines=True, registry=registry)
    build = dict(build_options or {})
    # an unknown evaluator or dataset, or one that cannot serve the space: refused before
    # an executor (a Ray instance) starts
    judging = judging_evaluator(sp, judge, dataset, registry)
    runner = _sweep_runner(executor, workers, executor_options, registry, sp, build, device)
    with runner:
        result = correlate_with(
            sp,
            names,
            judging,
            sample=sample if sample is not None else DEFAULT_SAMPLE,
            seed=seed,
            dataset=dataset,
            genotypes=pool,
            registry=registry,
            executor=runner,
            data=data,
            batch_size=batch_size,
            labels=labels,
            device=device,
            build=build,
            cache=cache_directory(cache),
            progress=progress,
        )
    if plot is not None:
        plot_correlation(result, plot)
    return result


def metric_names(
    names: Sequence[str] | None, *, with_baselines: bool = False, registry: Registry
) -> list[str]:
    """The metrics asked for (all if none), an unknown name refused with a suggestion;
    with the size baselines in front where their plugin is installed."""
    chosen = list(names) if names else list(registry.names("metric"))
    for name in chosen:
        registry.get("metric", name)  # an unknown name fails here, with a suggestion
    if with_baselines:
        known = registry.names("metric")
        chosen = [b for b in BASELINES if b not in chosen and b in known] + chosen
    return chosen


def whole_space_of(space: SearchSpace) -> list[Genotype]:
    """Every genotype of a finite space, refused for one that is infinite or cannot list
    its members (the DARTS space is finite in name only: about 7e21 cells)."""
    if space.size is None:
        raise worded(
            NasforgeError,
            f"space '{space.name}' is not finite: {{every}} needs a finite space such as {defaults.SPACE}",
            every=_WHOLE_SPACE,
        )
    if ENUMERATE not in space.capabilities:
        raise worded(
            NasforgeError,
            f"space '{space.name}' cannot list its {space.size:.3g} genotypes: {{every}} needs an "
            f"enumerable space such as {defaults.SPACE}",
            every=_WHOLE_SPACE,
        )
    return list(space.enumerate())


def cache_directory(cache: CacheChoice) -> Path | None:
    """Where scores are cached: the default directory for True, none for False."""
    if cache is True:
        return default_cache_dir()
    if cache is False:
        return None
    return Path(cache)


def check_seed(seed: int) -> None:
    """A seed torch's generators take (they hold 64-bit values)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise worded(
            OptionError, f"{{seed}} must be a whole number from 0 to {MAX_SEED}, got {seed!r}", seed=_SEED
        )


def _check_count(value: int, least: int, name: tuple[str, str]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise worded(
            OptionError, f"{{name}} must be a whole number of at least {least}, got {value!r}", name=name
        )


def _genotype(
    item: str | os.PathLike[str] | Genotype, space_name: str, space: SearchSpace, registry: Registry
) -> Genotype:
    """One genotype to score: a value as it is (checked against the space), anything else
    resolved as text, a file or a run directory."""
    if isinstance(item, Genotype):
        space.validate(item)
        return item
    return resolve_genotype(os.fspath(item), space_name, registry)[1]


__all__ = [
    "BASELINES",
    "DEFAULT_SAMPLE",
    "MAX_SEED",
    "Scores",
    "cache_directory",
    "check_seed",
    "correlate",
    "metric_names",
    "score",
    "whole_space_of",
]


def _sweep_runner(
    executor: str,
    workers: int | None,
    executor_options: Mapping[str, Any] | None,
    registry: Registry,
    sp: Any,
    build: dict[str, Any],
    device: str,
) -> SweepExecutor:
    """The sweep's runner, made before any work so a bad choice (or an unreachable cluster)
    fails at once; forked local workers inherit the sweep's network factory, made here once.

    On a GPU, ``workers=N`` alone means N local processes that build networks for this
    process, which scores them on the device (never a CUDA context per worker)."""
    if executor == "inprocess" and workers not in (None, 1) and _on_gpu(device):
        executor = "process"
    return make_sweep_executor(
        executor,
        workers=workers,
        options=dict(executor_options or {}),
        registry=registry,
        prepare=prepare_sweep(sp, build, device),
    )


def _on_gpu(device: str) -> bool:
    """Whether ``device`` names a GPU (a malformed one is refused later, in one line)."""
    import torch

    try:
        return torch.device(device).type != "cpu"
    except (RuntimeError, TypeError, ValueError):
        return False

"""`nasforge score` and `nasforge correlate`: training-free metrics from the command line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import ENUMERATE
from nasforge.run import defaults
from nasforge.run.defaults import default_component
from nasforge.tools.cli.common_options import (
    BuildOptions,
    CacheDir,
    Device,
    ExecutorOptionList,
    NoCache,
    Quiet,
    SweepExecutorOption,
    SweepWorkers,
    command_registry,
)
from nasforge.tools.cli.error_lines import one_line
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json
from nasforge.tools.export import resolve_genotype
from nasforge.tools.scoring.cache import default_cache_dir
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.parallel import SweepExecutor

#: Always shown beside any metric, because they are hard to beat (NAS-Bench-Suite-Zero).
BASELINES = defaults.BASELINE_METRICS

MetricList = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", help="Metric name, repeatable (see `nasforge metrics`) (default: all)."),
]
DataOption = Annotated[
    str, typer.Option(help="Batch source: gaussian (data-agnostic), digits, or any dataset name.")
]

#: Seeds seed torch generators, which take 64-bit values.
MAX_SEED = 2**63 - 1


def _metrics(names: list[str] | None, *, with_baselines: bool, registry: Registry) -> list[str]:
    """The metrics asked for (all if none), unknown names failing with a suggestion; with
    the size baselines in front where their plugin is installed."""
    chosen = list(names) if names else [n for n in registry.names("metric")]
    for name in chosen:
        registry.get("metric", name)  # unknown names fail here, with a suggestion
    if with_baselines:
        chosen = [b for b in BASELINES if b not in chosen and b in registry.names("metric")] + chosen
    return chosen


class _Rate(ProgressColumn):
    """Architectures per second over rich's recent window: what sizes a whole-space sweep."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        return Text("" if speed is None else f"{speed:.1f} cells/s", style="progress.data.speed")


class _Bar:
    """A rich progress bar usable as the scorer's progress callback (count, cells per
    second, time elapsed and left); where it is not live on a terminal, the count goes to
    the log every few seconds instead."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.enabled, self.label = enabled, label
        self.progress: Progress | None = None
        self.done = 0
        self.log = ProgressLog(
            "nasforge.scoring", label, unit="architecture", silent=bar_is_live(enabled, err_console)
        )

    def __enter__(self) -> _Bar:
        if self.enabled:
            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                _Rate(),
                TimeElapsedColumn(),
                TextColumn("•"),
                TimeRemainingColumn(),
                TextColumn("left"),
                console=err_console,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=None)
        return self

    def __call__(self, done: int, total: int, _g: Any) -> None:
        self.done, self.log.total = done, total
        self.log.update(done)
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
        if exc[0] is None:
            self.log.finish(self.done)


def _scoring(
    data: str,
    batch_size: int,
    labels: str,
    device: str,
    build_option: list[str] | None,
    cache: Path | None,
    no_cache: bool,
    bar: _Bar,
    runner: SweepExecutor,
) -> dict[str, Any]:
    """The scorer settings `score` and `correlate` share, from their command-line values."""
    return {
        "executor": runner,
        "data": data,
        "batch_size": batch_size,
        "labels": labels,
        "device": device,
        "build": parse_options(build_option),
        "cache": None if no_cache else (cache or default_cache_dir()),
        "progress": bar,
    }


def _runner(
    executor: str,
    workers: int | None,
    options: list[str] | None,
    registry: Registry,
    *,
    space: Any,
    build_option: list[str] | None,
    device: str,
) -> SweepExecutor:
    """The sweep's runner, made before any work so a bad choice (or an unreachable
    cluster) fails in one line at once, not after the sample is drawn and looked up;
    forked local workers inherit the sweep's network factory, made here once.

    On a GPU, ``--workers N`` alone means N local processes that build networks for this
    process, which scores them on the device (never a CUDA context per worker)."""
    from nasforge.tools.scoring.parallel import make_sweep_executor
    from nasforge.tools.scoring.sweep import prepare_sweep

    if executor == "inprocess" and workers not in (None, 1) and _on_gpu(device):
        executor = "process"
    return make_sweep_executor(
        executor,
        workers=workers,
        options=parse_options(options),
        registry=registry,
        prepare=prepare_sweep(space, parse_options(build_option), device),
    )


def _on_gpu(device: str) -> bool:
    """Whether ``device`` names a GPU (a malformed one is refused later, in one line)."""
    import torch

    try:
        return torch.device(device).type != "cpu"
    except (RuntimeError, TypeError, ValueError):
        return False


def _whole_space(sp: Any, space: str) -> list[Any]:
    """Every genotype of a finite space (``--all``), refused for one that is infinite or
    cannot list its members (the DARTS space is finite in name only: ~7e21 cells)."""
    if sp.size is None:
        raise NasforgeError(
            f"space '{space}' is not finite: --all needs a finite space such as {defaults.SPACE}"
        )
    if ENUMERATE not in sp.capabilities:
        raise NasforgeError(
            f"space '{space}' cannot list its {sp.size:.3g} genotypes: --all needs an enumerable "
            f"space such as {defaults.SPACE}"
        )
    return list(sp.enumerate())


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def score(
    ctx: typer.Context,
    genotypes: Annotated[
        list[str] | None, typer.Argument(help="Genotype strings or .safetensors files (or use --sample).")
    ] = None,
    space: Annotated[
        str | None, typer.Option(help=f"Search space of the genotypes (default: {defaults.SPACE}).")
    ] = None,
    metric: MetricList = None,
    sample: Annotated[
        int | None, typer.Option(min=1, help="Score this many random genotypes of the space.")
    ] = None,
    data: DataOption = "gaussian",
    batch_size: Annotated[int, typer.Option(min=1, help="Samples in the scoring batch.")] = 64,
    labels: Annotated[str, typer.Option(help="true, or random (label-agnostic mode).")] = "true",
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_SEED, help="Seed of initialisation, batch and sample.")
    ] = 0,
    device: Device = "cpu",
    build_option: BuildOptions = None,
    cache: CacheDir = None,
    no_cache: NoCache = False,
    every: Annotated[
        bool, typer.Option("--all", help="Score every genotype of a finite space (nb201: 15,625).")
    ] = False,
    executor: SweepExecutorOption = "inprocess",
    workers: SweepWorkers = None,
    executor_option: ExecutorOptionList = None,
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print scores as JSON to stdout.")] = False,
) -> None:
    """Score architectures with training-free metrics (untrained networks, one batch).

    Example: nasforge score --space nb201 --sample 5 -m synflow -m naswot

    NaN or inf scores are flagged, not fatal. Scores are cached by genotype, metric, seed,
    data and build options, so a rerun costs nothing. --executor process --workers N
    scores on N cores (the same numbers). With --device cuda this process scores on the
    GPU while --workers N processes build the networks (several at once per launch where
    the space and metric allow it).
    """
    from nasforge.tools.scoring import sample_genotypes, score_genotypes

    registry = command_registry(ctx)
    space = space or default_component(registry, "space", defaults.SPACE)
    sp = registry.get("space", space)()
    chosen = [resolve_genotype(text, space, registry)[1] for text in genotypes or []]
    if sample:
        chosen += sample_genotypes(sp, sample, seed=seed)
    if every:
        chosen += _whole_space(sp, space)
    if not chosen:
        raise NasforgeError("give genotypes to score, or --sample N, or --all")
    names = _metrics(metric, with_baselines=False, registry=registry)
    runner = _runner(
        executor, workers, executor_option, registry, space=sp, build_option=build_option, device=device
    )
    with runner, _Bar("scoring", not quiet) as bar:
        table = score_genotypes(
            sp,
            chosen,
            names,
            seed=seed,
            registry=registry,
            **_scoring(data, batch_size, labels, device, build_option, cache, no_cache, bar, runner),
        )
    if json_out:
        payload = table.to_json()
        for row, g in zip(payload["rows"], table.genotypes, strict=True):
            row["text"] = sp.format(g)
        print_json(payload)
        return
    view = Table(title=f"training-free scores ({data}, batch {batch_size}, seed {seed})")
    view.add_column("genotype", overflow="fold", ratio=3)
    for name in table.metrics:
        view.add_column(name, justify="right")
    for g, row in zip(table.genotypes, table.rows, strict=True):
        cells = [_cell(row[m]) for m in table.metrics]
        view.add_row(sp.format(g), *cells)
    out_console.print(view)


def _cell(score: MetricScore) -> str:
    """A score as the table shows it: its flag where unusable, and a metric's error message
    where it raised (the same words ``--json`` carries, cut to one short line)."""
    if score.ok:
        return _fmt(score.value)
    text = f"{_fmt(score.value)} [red]{score.flag}[/]"
    if score.error:
        text += f": {escape(one_line(score.error, limit=120))}"
    return text


def correlate(
    ctx: typer.Context,
    space: Annotated[
        str | None,
        typer.Option(
            help=f"A finite search space with a ground-truth evaluator (default: {defaults.SPACE})."
        ),
    ] = None,
    metric: MetricList = None,
    sample: Annotated[
        int | None, typer.Option(min=2, help="Random architectures to score and look up (default: 200).")
    ] = None,
    every: Annotated[
        bool,
        typer.Option("--all", help="Every architecture of the space instead of a sample (nb201: 15,625)."),
    ] = False,
    evaluator: Annotated[
        str | None,
        typer.Option(help=f"Ground truth (see `nasforge evaluators`) (default: {defaults.TABLE_EVALUATOR})."),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="The evaluator's benchmark dataset, e.g. cifar10, cifar100, imagenet16-120 "
            f"(default: {defaults.TABLE_DATASET} for {defaults.TABLE_EVALUATOR})."
        ),
    ] = None,
    data: DataOption = "gaussian",
    batch_size: Annotated[int, typer.Option(min=1, help="Samples in the scoring batch.")] = 64,
    labels: Annotated[str, typer.Option(help="true, or random (label-agnostic mode).")] = "true",
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_SEED, help="Seed of the sample, initialisation and batch.")
    ] = 0,
    device: Device = "cpu",
    build_option: BuildOptions = None,
    plot: Annotated[
        Path | None, typer.Option(help="Write a scatter plot here (format from the suffix: png, svg, pdf).")
    ] = None,
    cache: CacheDir = None,
    no_cache: NoCache = False,
    executor: SweepExecutorOption = "inprocess",
    workers: SweepWorkers = None,
    executor_option: ExecutorOptionList = None,
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print coefficients as JSON to stdout.")] = False,
) -> None:
    """Rank correlation (Spearman, Kendall) of metrics with a benchmark's accuracy.

    Example: nasforge correlate --space nb201 -m synflow -m jacob_cov --sample 1000 --plot synflow.png

    Whole space on two cores: nasforge correlate --space nb201 -m synflow --all --executor process --workers 2

    params and flops are always included as baselines. Scores are cached, so a rerun
    with more metrics only computes what is new.
    """
    from nasforge.tools.scoring import correlate as run_correlate
    from nasforge.tools.scoring import plot_correlation
    from nasforge.tools.scoring.plot import plot_format

    if plot is not None:
        plot_format(plot)  # a typo in the suffix fails now, not after the scoring
    registry = command_registry(ctx)
    space = space or default_component(registry, "space", defaults.SPACE)
    evaluator = evaluator or default_component(registry, "evaluator", defaults.TABLE_EVALUATOR)
    if dataset is None and evaluator == defaults.TABLE_EVALUATOR:
        dataset = defaults.TABLE_DATASET
    sp = registry.get("space", space)()
    if sp.size is None:
        raise NasforgeError(
            f"space '{space}' is not finite: correlate needs a benchmark space such as {defaults.SPACE}"
        )
    if every and sample is not None:
        raise NasforgeError("give --sample N or --all, not both")
    genotypes = _whole_space(sp, space) if every else None
    sample = sample if sample is not None else 200
    names = _metrics(metric, with_baselines=True, registry=registry)
    size = f"all {len(genotypes):,}" if genotypes is not None else str(sample)
    label = f"scoring {size} architectures"
    runner = _runner(
        executor, workers, executor_option, registry, space=sp, build_option=build_option, device=device
    )
    with runner, _Bar(label, not quiet) as bar:
        result = run_correlate(
            sp,
            names,
            evaluator,
            sample=sample,
            seed=seed,
            dataset=dataset,
            genotypes=genotypes,
            registry=registry,
            **_scoring(data, batch_size, labels, device, build_option, cache, no_cache, bar, runner),
        )
    if plot is not None:
        plot_correlation(result, plot)
    _print_correlation(result, space, dataset, plot, json_out)


def _print_correlation(
    result: Any, space: str, dataset: str | None, plot: Path | None, json_out: bool
) -> None:
    """The coefficients as JSON, or as a table (baselines dimmed), strongest first."""
    if json_out:
        payload = result.to_json()
        payload["plot"] = str(plot) if plot else None
        print_json(payload)
        return
    on = f" ({dataset})" if dataset else ""
    view = Table(title=f"{space}: metrics vs {result.objective}{on}, n={len(result.targets)}")
    for col in ("metric", "Spearman ρ", "Kendall τ", "flagged"):
        view.add_column(col, justify="left" if col == "metric" else "right")
    for c in sorted(result.per_metric, key=lambda c: -abs(c.spearman) if math.isfinite(c.spearman) else 0):
        style = "dim" if c.metric in BASELINES else ""
        view.add_row(c.metric, f"{c.spearman:.3f}", f"{c.kendall:.3f}", str(c.n_flagged), style=style)
    out_console.print(view)
    if plot is not None:
        out_console.print(f"scatter plot: {plot}")

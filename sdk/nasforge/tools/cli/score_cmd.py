"""`nasforge score` and `nasforge correlate`: training-free metrics from the command line.

Both parse their flags, call :func:`nasforge.api.score` or :func:`nasforge.api.correlate`
(which make every check, with one message) and print what comes back.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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

from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.run import defaults
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

if TYPE_CHECKING:
    from nasforge.tools.scoring.correlate import CorrelationResult
    from nasforge.tools.scoring.outcome import MetricScore

#: Shown beside every metric, dimmed (the size baselines).
BASELINES = defaults.BASELINE_METRICS
DEFAULT_SAMPLE = defaults.CORRELATION_SAMPLE

MetricList = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", help="Metric name, repeatable (see `nasforge metrics`) (default: all)."),
]
DataOption = Annotated[
    str, typer.Option(help="Batch source: gaussian (data-agnostic), digits, or any dataset name.")
]
BatchSize = Annotated[int, typer.Option(help="Samples in the scoring batch.")]
Labels = Annotated[str, typer.Option(help="true, or random (label-agnostic mode).")]


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
        return self

    def _start(self) -> Progress:
        """The live bar, started with the first count (so a refusal before any work draws none)."""
        progress = Progress(
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
        progress.start()
        self.task = progress.add_task(self.label, total=None)
        return progress

    def __call__(self, done: int, total: int, _g: Any) -> None:
        self.done, self.log.total = done, total
        self.log.update(done)
        if self.enabled and self.progress is None:
            self.progress = self._start()
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
) -> dict[str, Any]:
    """The scoring settings `score` and `correlate` share, as the API takes them."""
    return {
        "data": data,
        "batch_size": batch_size,
        "labels": labels,
        "device": device,
        "build_options": parse_options(build_option),
        "cache": False if no_cache else (cache or True),
    }


def _where(executor: str, workers: int | None, executor_option: list[str] | None) -> dict[str, Any]:
    """Where the networks are built and scored, as the API takes it."""
    return {"executor": executor, "workers": workers, "executor_options": parse_options(executor_option)}


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def score(
    ctx: typer.Context,
    genotypes: Annotated[
        list[str] | None,
        typer.Argument(help="Genotype strings, .safetensors files or run directories (or --sample)."),
    ] = None,
    space: Annotated[
        str | None,
        typer.Option(help=f"Search space of the genotypes, or PATH.py:NAME (default: {defaults.SPACE})."),
    ] = None,
    metric: MetricList = None,
    sample: Annotated[
        int | None, typer.Option(metavar="N", help="Score N random genotypes of the space.")
    ] = None,
    data: DataOption = "gaussian",
    batch_size: BatchSize = 64,
    labels: Labels = "true",
    seed: Annotated[int, typer.Option(help="Seed of initialisation, batch and sample.")] = 0,
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

    NaN or inf scores are flagged, not fatal. A network that cannot be built is scored
    NaN and named on stderr with its error; the others are scored, and the command exits
    1 (--json lists them under failed). Scores are cached by genotype, metric, seed,
    data and build options, so a rerun costs nothing. --executor process --workers N
    scores on N cores (the same numbers). With --device cuda this process scores on the
    GPU while --workers N processes build the networks (several at once per launch where
    the space and metric allow it).
    """
    from nasforge import api  # torch loads here, not for --help

    with _Bar("scoring", not quiet) as bar:
        scores = api.score(
            genotypes or [],
            space=space,
            metrics=metric,
            sample=sample,
            whole_space=every,
            seed=seed,
            registry=command_registry(ctx),
            progress=bar,
            **_scoring(data, batch_size, labels, device, build_option, cache, no_cache),
            **_where(executor, workers, executor_option),
        )
    if json_out:
        print_json(scores.to_json())
    else:
        view = Table(title=f"training-free scores ({data}, batch {batch_size}, seed {seed})")
        view.add_column("genotype", overflow="fold", ratio=3)
        for name in scores.table.metrics:
            view.add_column(name, justify="right")
        for text, row in zip(scores.texts(), scores.table.rows, strict=True):
            view.add_row(text, *[_cell(row[m]) for m in scores.table.metrics])
        out_console.print(view)
    _exit_if_unbuilt(ctx, scores.failed(), len(scores.table.genotypes))


def _exit_if_unbuilt(ctx: typer.Context, failed: list[dict[str, Any]], total: int) -> None:
    """Each network that could not be built on stderr, then the count, and exit status 1:
    the scores of the others are printed, and a script sees that some are missing."""
    if not failed:
        return
    for row in failed:
        err_console.print(
            f"[red]not built:[/] {escape(row['text'])}: {escape(one_line(row['error'], limit=200))}",
            highlight=False,
            soft_wrap=True,
        )
    err_console.print(
        f"[red]{len(failed)} of {total} networks could not be built[/] (their scores are NaN); "
        "the others are scored",
        highlight=False,
        soft_wrap=True,
    )
    ctx.exit(1)


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
        typer.Option(help=f"A space with a ground truth, or PATH.py:NAME (default: {defaults.SPACE})."),
    ] = None,
    metric: MetricList = None,
    sample: Annotated[
        int | None,
        typer.Option(
            metavar="N", help=f"Random architectures to score and look up (default: {DEFAULT_SAMPLE})."
        ),
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
    batch_size: BatchSize = 64,
    labels: Labels = "true",
    seed: Annotated[int, typer.Option(help="Seed of the sample, initialisation and batch.")] = 0,
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
    from nasforge import api  # torch loads here, not for --help

    with _Bar("scoring architectures", not quiet) as bar:
        result = api.correlate(
            space=space,
            metrics=metric,
            sample=sample,
            whole_space=every,
            evaluator=evaluator,
            dataset=dataset,
            seed=seed,
            plot=plot,
            registry=command_registry(ctx),
            progress=bar,
            **_scoring(data, batch_size, labels, device, build_option, cache, no_cache),
            **_where(executor, workers, executor_option),
        )
    _print_correlation(result, plot, json_out)


def _print_correlation(result: CorrelationResult, plot: Path | None, json_out: bool) -> None:
    """The coefficients as JSON, or as a table (baselines dimmed), strongest first."""
    if json_out:
        payload = result.to_json()
        payload["plot"] = str(plot) if plot else None
        print_json(payload)
        return
    on = f" ({result.dataset})" if result.dataset else ""
    view = Table(title=f"{result.space}: metrics vs {result.objective}{on}, n={len(result.targets)}")
    for col in ("metric", "Spearman ρ", "Kendall τ", "flagged"):
        view.add_column(col, justify="left" if col == "metric" else "right")
    for c in sorted(result.per_metric, key=lambda c: -abs(c.spearman) if math.isfinite(c.spearman) else 0):
        style = "dim" if c.metric in BASELINES else ""
        view.add_row(c.metric, f"{c.spearman:.3f}", f"{c.kendall:.3f}", str(c.n_flagged), style=style)
    out_console.print(view)
    if plot is not None:
        out_console.print(f"scatter plot: {plot}")

"""`nasforge search` and `nasforge resume`, for ask/tell and one-shot strategies alike.

A run of several objectives (``--objective`` twice or more) prints its Pareto front as a
table and draws it (``--plot``; by default ``RUN_DIR/pareto.png`` where matplotlib is
installed); ``--json`` carries the goal (``search_objectives``, ``constraints``) and the
``front``. ``objectives`` stays what it always was: every number of the best trial.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nasforge.kernel.executor_contract import DEFAULT_RETRIES
from nasforge.run.journal_file import JournalReader
from nasforge.tools.cli import log_output
from nasforge.tools.cli.common_options import command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console
from nasforge.tools.cli.run_lines import run_directory_lines
from nasforge.tools.cli.search_options import (
    Asynchronous,
    BenchmarkDataset,
    BudgetSeconds,
    BudgetSimSeconds,
    BudgetTrials,
    Constraints,
    Dataset,
    EvaluatorName,
    EvaluatorOptions,
    ExecutorName,
    Export,
    ExportBuildOptions,
    Fuse,
    JsonOut,
    Objectives,
    OptionList,
    Plot,
    ResumeExport,
    Retries,
    RunDir,
    SearchDevice,
    SearchExecutorOptions,
    SearchQuiet,
    Seed,
    SpaceName,
    SpaceOptions,
    StopAfterSeconds,
    StopPlateau,
    StopWhen,
    StrategyName,
    StrategyOptions,
    TrainData,
    Workers,
)

if TYPE_CHECKING:
    from nasforge.run.experiment import Experiment
    from nasforge.run.one_shot_run import OneShotRun


def search(
    ctx: typer.Context,
    space: SpaceName = None,
    strategy: StrategyName = None,
    evaluator: EvaluatorName = None,
    objective: Objectives = None,
    constraint: Constraints = None,
    seed: Seed = 0,
    option: StrategyOptions = None,
    evaluator_option: EvaluatorOptions = None,
    space_option: SpaceOptions = None,
    build_option: ExportBuildOptions = None,
    budget_trials: BudgetTrials = None,
    budget_seconds: BudgetSeconds = None,
    budget_sim_seconds: BudgetSimSeconds = None,
    stop_when: StopWhen = None,
    stop_after_seconds: StopAfterSeconds = None,
    stop_plateau: StopPlateau = None,
    dataset: Dataset = None,
    train_data: TrainData = None,
    benchmark_dataset: BenchmarkDataset = None,
    device: SearchDevice = None,
    workers: Workers = 1,
    executor: ExecutorName = "inprocess",
    asynchronous: Asynchronous = False,
    executor_option: SearchExecutorOptions = None,
    retries: Retries = DEFAULT_RETRIES,
    run_dir: RunDir = None,
    export: Export = None,
    fuse: Fuse = True,
    plot: Plot = None,
    quiet: SearchQuiet = False,
    json_out: JsonOut = False,
) -> None:
    """Search a space with a strategy, journaling every trial, and print the best architecture.

    Examples (ask/tell on the bundled NAS-Bench-201 table; one-shot on bundled data;
    two objectives under a constraint; four trials in flight on a Ray cluster):

        nasforge search --strategy rea --dataset cifar10 --budget-trials 200
        nasforge search --space darts --strategy darts --dataset digits -o epochs=5
        nasforge search --strategy nsga2 --objective valid_accuracy:max \\
            --objective latency_ms:min --constraint 'params_mb<=0.5'
        nasforge search --executor ray -x address=HOST:PORT --workers 4 --async

    Kill it at any time and continue with `nasforge resume RUN_DIR`.
    """
    from nasforge.run.api import build_spec, run_spec  # torch loads here, not for --help
    from nasforge.tools.cli.search_report import check_plot

    with log_output.held_until_the_run_starts():  # a refusal stays the one line
        registry = command_registry(ctx)
        spec = build_spec(
            space,
            strategy,
            evaluator,
            dataset=dataset,
            train_data=train_data,
            benchmark_dataset=benchmark_dataset,
            device=device,
            trials=budget_trials,
            seconds=budget_seconds,
            simulated_seconds=budget_sim_seconds,
            seed=seed,
            space_options=parse_options(space_option),
            strategy_options=parse_options(option),
            evaluator_options=parse_options(evaluator_option),
            build_options=parse_options(build_option),
            executor=executor,
            workers=workers,
            objectives=objective,
            constraints=constraint,
            stop=_stop_rules(stop_when, stop_after_seconds, stop_plateau),
            registry=registry,
        )
        check_plot(plot, len(spec.objectives))
        if run_dir is None:
            run_dir = Path("runs") / f"{spec.space}-{spec.strategy}-s{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
        with run_directory_lines(run_dir):
            run = run_spec(
                spec,
                run_dir=run_dir,
                registry=registry,
                progress=not quiet,
                console=err_console,
                asynchronous=asynchronous,
                executor_options=parse_options(executor_option),
                retries=retries,
                defaulted=("strategy",) if strategy is None else (),  # the summary says it was the default
            )
    _report(run, export, build_option, json_out, fuse, plot)


def resume(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="The run directory holding journal.jsonl.")],
    export: ResumeExport = None,
    fuse: Fuse = True,
    plot: Plot = None,
    executor_option: SearchExecutorOptions = None,
    retries: Retries = DEFAULT_RETRIES,
    quiet: SearchQuiet = False,
    json_out: JsonOut = False,
) -> None:
    """Continue a killed search from its journal (finished trials are replayed, not re-run).

    It continues on the executor and workers it was started with, evaluated as it was
    (rounds, or --async); --executor-option may point a cluster run at another cluster."""
    from nasforge.run.api import resume_run  # torch loads here, not for --help
    from nasforge.tools.cli.search_report import check_plot

    registry = command_registry(ctx)
    with log_output.held_until_the_run_starts():  # a refusal stays the one line
        if plot is not None:
            check_plot(plot, recorded_objectives(run_dir))
        with run_directory_lines(run_dir, resumed=True):
            run = resume_run(
                run_dir,
                registry=registry,
                progress=not quiet,
                console=err_console,
                executor_options=parse_options(executor_option),
                retries=retries,
            )
    _report(run, export, None, json_out, fuse, plot)


def _report(
    run: Experiment | OneShotRun,
    export: Path | None,
    build_option: OptionList,
    json_out: bool,
    fuse: bool,
    plot: Path | None,
) -> None:
    from nasforge.run.one_shot_run import OneShotRun
    from nasforge.tools.cli.search_report import report_ask_tell, report_one_shot

    if isinstance(run, OneShotRun):
        report_one_shot(run, export, build_option, json_out, fuse)
    else:
        report_ask_tell(run, export, build_option, json_out, plot)


def recorded_objectives(run_dir: Path) -> int:
    """How many objectives the run in ``run_dir`` searches (0 for a one-shot run), read from
    its journal's header, so a ``--plot`` it cannot draw is refused before it resumes."""
    header = JournalReader.of_run(run_dir).header
    if header.get("mode") == "one-shot":
        return 0
    return len((header.get("spec") or {}).get("objectives") or ())


def _stop_rules(when: OptionList, seconds: float | None, plateau: int | None) -> list[str]:
    """The stop rules of ``--stop-when``, ``--stop-after-seconds`` and ``--stop-plateau``, as text."""
    rules = list(when or [])
    if seconds is not None:
        rules.append(f"time:{seconds:g}")
    if plateau is not None:
        rules.append(f"plateau:{plateau}")
    return rules

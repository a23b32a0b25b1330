"""`nasforge search` and `nasforge resume`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from nasforge.budget import Budget
from nasforge.cli.options import parse_options
from nasforge.cli.output import err_console, out_console, print_json
from nasforge.experiment import Experiment
from nasforge.result import SearchOutcome
from nasforge.spec import ExperimentSpec


def search(
    space: Annotated[str, typer.Option(help="Search space name (see `nasforge spaces`).")] = "nb201",
    strategy: Annotated[str, typer.Option(help="Strategy name (see `nasforge strategies`).")] = "rea",
    evaluator: Annotated[
        str, typer.Option(help="Evaluator name (see `nasforge evaluators`).")
    ] = "nb201-table",
    dataset: Annotated[
        str, typer.Option(help="Dataset: for nb201-table one of cifar10, cifar100, imagenet16-120.")
    ] = "cifar10",
    budget_trials: Annotated[
        int | None, typer.Option(help="Stop after this many evaluated architectures.")
    ] = None,
    budget_seconds: Annotated[float | None, typer.Option(help="Stop after this many wall seconds.")] = None,
    budget_sim_seconds: Annotated[
        float | None, typer.Option(help="Stop after this many simulated seconds (tabular evaluators).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the strategy (runs are reproducible).")] = 0,
    run_dir: Annotated[
        Path | None,
        typer.Option(help="Journal directory [default: runs/<space>-<strategy>-s<seed>-<time>]."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Strategy option key=value, e.g. -o population_size=20."),
    ] = None,
    evaluator_option: Annotated[
        list[str] | None, typer.Option("--evaluator-option", help="Evaluator option key=value.")
    ] = None,
    space_option: Annotated[
        list[str] | None, typer.Option("--space-option", help="Space option key=value.")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Evaluations in flight at once.")] = 1,
    executor: Annotated[str, typer.Option(help="Executor: inprocess or process.")] = "inprocess",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Search a space with a strategy and an evaluator, journaling every trial.

    Example: nasforge search --space nb201 --strategy rea --evaluator nb201-table
    --dataset cifar10 --budget-trials 200

    With no budget the search runs 100 trials. Kill it at any time and continue with
    `nasforge resume RUN_DIR`: no finished trial is lost or repeated.
    """
    if budget_trials is None and budget_seconds is None and budget_sim_seconds is None:
        budget_trials = 100
    budget = Budget(trials=budget_trials, seconds=budget_seconds, simulated_seconds=budget_sim_seconds)
    spec = ExperimentSpec(
        space=space,
        strategy=strategy,
        evaluator=evaluator,
        dataset=dataset,
        budget=budget,
        seed=seed,
        space_options=parse_options(space_option),
        strategy_options=parse_options(option),
        evaluator_options=parse_options(evaluator_option),
        executor=executor,
        workers=workers,
    )
    if run_dir is None:
        run_dir = Path("runs") / f"{space}-{strategy}-s{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    experiment = Experiment.from_spec(spec, run_dir=run_dir, progress=not quiet, console=err_console)
    _report(experiment, experiment.run(), json_out)


def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory holding journal.jsonl.")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Continue a killed search from its journal (finished trials are replayed, not re-run)."""
    experiment = Experiment.resume(run_dir, progress=not quiet, console=err_console)
    _report(experiment, experiment.run(), json_out)


def _report(experiment: Experiment, outcome: SearchOutcome, json_out: bool) -> None:
    space = experiment.space
    objective = experiment.evaluator.objective
    best = outcome.best_result
    value = best.objectives.get(objective.name) if best else None
    sim = sum(t.result.cost for t in outcome.history)
    if json_out:
        print_json(
            {
                "best": space.format(outcome.best),
                "best_genotype": outcome.best.to_json(),
                "objective": objective.name,
                "value": value,
                "trials": len(outcome.history),
                "simulated_seconds": sim if experiment.evaluator.simulated else None,
                "run_dir": str(experiment.run_dir),
            }
        )
        return
    table = Table(title="search finished", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    table.add_row("best", space.format(outcome.best))
    table.add_row(objective.name, f"{value:.4f}" if value is not None else "-")
    table.add_row("trials", str(len(outcome.history)))
    if experiment.evaluator.simulated:
        table.add_row("simulated time", f"{sim / 3600:.1f} h" if sim >= 3600 else f"{sim:.1f} s")
    table.add_row("journal", str(experiment.run_dir))
    out_console.print(table)

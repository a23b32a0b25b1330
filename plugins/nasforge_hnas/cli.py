"""`nasforge hnas`: a deprecated name for ``nasforge search --strategy hnas``, removed in 0.3.

``nasforge search --strategy hnas --evaluator short-train --dataset digits -o data=digits
--build-option C=8 --build-option N=1 --export OUT`` is the same search: the run's network
options reach the pool's training-free scoring, the evaluator's short training and the
export, and ``-o data=`` scores the pool on that dataset (Gaussian data without it). This
command builds that search from its own flags, runs it, and says on stderr which search
command does the same (the same trials and best; its journal records its own flags, as
it always did, so its earlier runs resume unchanged).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from nasforge.kernel.errors import NasforgeError
from nasforge.run import defaults
from nasforge.tools.cli.common_options import (
    ExecutorOptionList,
    Quiet,
    SweepExecutorOption,
    SweepWorkers,
    command_registry,
)
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json


def hnas(
    ctx: typer.Context,
    space: Annotated[str, typer.Option(help="Search space (nb201, darts, ...).")] = defaults.SPACE,
    evaluator: Annotated[str, typer.Option(help="Evaluator of each BO step.")] = "short-train",
    dataset: Annotated[
        str, typer.Option(help="Evaluator's dataset (nb201-table: cifar10...).")
    ] = defaults.TRAINING_DATASET,
    steps: Annotated[int, typer.Option(min=1, help="K: BO steps, one evaluation each.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the pool and the BO.")] = 0,
    build_option: Annotated[
        list[str] | None,
        typer.Option("--build-option", help="Network option key=value for pool, evaluator and export."),
    ] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="HNAS option key=value.")] = None,
    evaluator_option: Annotated[
        list[str] | None, typer.Option("--evaluator-option", help="Evaluator option key=value.")
    ] = None,
    run_dir: Annotated[Path | None, typer.Option(help="Journal directory (default: runs/hnas-...).")] = None,
    out: Annotated[Path, typer.Option(help="Directory for the genotype and its ONNX model.")] = Path(
        "export/hnas"
    ),
    onnx: Annotated[bool, typer.Option("--onnx/--no-onnx", help="Also export the network as ONNX.")] = True,
    executor: SweepExecutorOption = "inprocess",
    workers: SweepWorkers = None,
    executor_option: ExecutorOptionList = None,
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Deprecated, removed in 0.3: use nasforge search --strategy hnas (--build-option, -o data=, --export).

    Searches with HNAS (pre-scored pool + BO over mu, nu), journaled, and exports the best.
    Example: nasforge hnas --space nb201 --evaluator short-train --dataset digits
    --build-option C=8 --build-option N=1 --out export/hnas-digits

    --executor process --workers N scores the pool (HNAS's dominant cost) on N cores; the
    BO steps stay sequential, and the scores (and so the search) are the same.
    """
    # torch and the run load here, not for --help
    from nasforge.kernel.datasets import load_dataset, network_options
    from nasforge.run.budget import Budget
    from nasforge.run.experiment import Experiment
    from nasforge.run.spec import ExperimentSpec
    from nasforge.tools.export import export_bundle
    from nasforge.tools.scoring import make_sweep_executor
    from nasforge_hnas.pool import PoolScorer

    registry = command_registry(ctx)
    build = parse_options(build_option)
    strategy_options: dict[str, Any] = {"steps": steps, "build": dict(build)}
    evaluator_options = parse_options(evaluator_option)
    shape: tuple[int, ...] = (3, 32, 32)
    simulated = registry.get("evaluator", evaluator).simulated
    # a tabular benchmark's "dataset" names its table: the pool is then scored on
    # Gaussian data (data-agnostic); a training evaluator's data is scored directly
    if not simulated and dataset in registry.names("dataset"):
        data = load_dataset(dataset, registry=registry, seed=seed)
        shape = data.input_shape
        strategy_options.update(data=dataset, input_shape=list(shape), num_classes=data.num_classes)
        # what the data decides, as everywhere (in_channels only for image-shaped inputs)
        for key, value in network_options(shape, data.num_classes).items():
            strategy_options["build"].setdefault(key, value)
        evaluator_options.setdefault("build", dict(build))
    pool_data = "data" in strategy_options  # the command's own choice, before -o options
    strategy_options.update(parse_options(option))
    spec = ExperimentSpec(
        space=space,
        strategy="hnas",
        evaluator=evaluator,
        dataset=dataset,
        budget=Budget(trials=steps),
        seed=seed,
        strategy_options=strategy_options,
        evaluator_options=evaluator_options,
    )
    if run_dir is None:
        run_dir = Path("runs") / f"hnas-{space}-{dataset}-s{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    started = time.perf_counter()
    # made first, so a bad --executor/--workers or an unreachable cluster fails before the run starts
    options = parse_options(executor_option)
    with make_sweep_executor(executor, workers=workers, options=options, registry=registry) as runner:
        experiment = Experiment.from_spec(
            spec, run_dir=run_dir, registry=registry, progress=not quiet, console=err_console
        )
        # where the pool is scored is not a setting of the run (the journal and the cache key
        # never see it): it is handed to the strategy's scorer, not to its options
        scorer = getattr(experiment.strategy, "scorer", None)
        if isinstance(scorer, PoolScorer):
            scorer.executor = runner
        outcome = experiment.run()
    seconds = time.perf_counter() - started
    sp = experiment.space
    export_build = dict(strategy_options["build"])
    try:
        bundle = export_bundle(
            outcome.best, out, sp, input_shape=(1, *shape), build_options=export_build, onnx=onnx
        )
    except TypeError as exc:  # a build option the space does not take
        raise NasforgeError(f"cannot build the exported network with {export_build}: {exc}") from exc
    files: dict[str, Any] = {"genotype": str(bundle.genotype_file)}
    if bundle.onnx is not None:
        files.update(onnx=str(bundle.onnx.path), max_abs_diff=bundle.onnx.max_abs_diff, build=export_build)
    objective = experiment.evaluator.objective.name
    reported = experiment.evaluator.reported
    separate = reported != objective  # the protocol: chosen by one objective, reported by another
    best = outcome.best_result
    summary = {
        "method": "hnas",
        "best": sp.format(outcome.best),
        "best_genotype": outcome.best.to_json(),
        objective: best.objectives.get(objective) if best else None,
        "reported_objective": reported if separate else None,
        "reported_value": best.objectives.get(reported) if best and separate else None,
        "objectives": dict(best.objectives) if best else None,
        "trials": len(outcome.history),
        "seconds": round(seconds, 2),
        "run_dir": str(run_dir),
        **files,
    }
    _print(summary, json_out)
    # last, after the run: a refused input still gets its one line on stderr, nothing more
    where = [f"--executor {executor}", *([f"--workers {workers}"] if workers else [])]
    where += [f"--executor-option {o}" for o in executor_option or []]
    _say_deprecated(
        space,
        evaluator,
        dataset,
        steps,
        build_option,
        out,
        pool_data=pool_data,
        where=where if executor != "inprocess" else [],
    )


def _say_deprecated(
    space: str,
    evaluator: str,
    dataset: str,
    steps: int,
    build_option: list[str] | None,
    out: Path,
    *,
    pool_data: bool,
    where: list[str],
) -> None:
    """One line on stderr: the search command that runs the same HNAS (``pool_data``: the
    pool is scored on ``dataset``, not on Gaussian data; ``where``: the executor flags, which
    a search hands to the strategy's pool scoring as they are)."""
    extra = f" -o data={dataset}" if pool_data else ""
    extra += "".join(f" --build-option {b}" for b in build_option or [])
    extra += "".join(f" {w}" for w in where)
    err_console.print(
        f"nasforge hnas is deprecated (removed in nasforge 0.3): nasforge search --strategy hnas "
        f"--space {space} --evaluator {evaluator} --dataset {dataset} --budget-trials {steps} "
        f"-o steps={steps}{extra} --export {out} does the same",
        soft_wrap=True,
        highlight=False,
    )


def _print(summary: dict[str, Any], json_out: bool) -> None:
    if json_out:
        print_json(summary)
        return
    table = Table(title=f"{summary['method']} finished", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for k, v in summary.items():
        if k in ("method", "best_genotype") or v is None:  # JSON keeps the nulls, the table omits them
            continue
        if k == "objectives":  # every objective of the best trial, on one line
            v = ", ".join(f"{n} {x:.4g}" if isinstance(x, float) else f"{n} {x}" for n, x in v.items())
        table.add_row(k, f"{v:.4g}" if isinstance(v, float) else str(v))
    out_console.print(table)

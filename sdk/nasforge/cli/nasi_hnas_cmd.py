"""`nasforge nasi` and `nasforge hnas`: run a training-free search, export the result.

One command each, because a user who asks "search digits with NASI" wants the
architecture as files, not a run directory to post-process: the genotype goes to
``OUT/genotype.safetensors`` and its network to ``OUT/model.onnx`` (parity-checked with
onnxruntime). NASI is a one-shot method (no ask/tell), so ``nasforge search`` cannot run
it; HNAS is ask/tell, and this command is ``nasforge search --strategy hnas`` plus the
export, journaled the same way. Both look everything up through the registry.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from nasforge.budget import Budget
from nasforge.cli.options import parse_options
from nasforge.cli.output import err_console, out_console, print_json
from nasforge.errors import NasforgeError
from nasforge.experiment import Experiment
from nasforge.export import export_genotype, export_onnx
from nasforge.genotype import Genotype
from nasforge.registry import get_registry
from nasforge.search_space import SearchSpace
from nasforge.spec import ExperimentSpec

#: Supernet options that also shape the stand-alone network of the derived genotype.
SHARED_SHAPE_OPTIONS = ("C", "N", "layers")


def nasi(
    space: Annotated[str, typer.Option(help="Search space with a supernet (nb201, darts).")] = "nb201",
    dataset: Annotated[str, typer.Option(help="Registered dataset (see `nasforge datasets`).")] = "digits",
    steps: Annotated[int, typer.Option(min=1, help="T: straight-through samples.")] = 100,
    batch_size: Annotated[int, typer.Option(min=1, help="b: proxy mini-batch size.")] = 64,
    mu: Annotated[float, typer.Option(min=0.0, help="Penalty coefficient.")] = 2.0,
    mode: Annotated[str, typer.Option(help="fix (NASI-FIX) or ada (NASI-ADA).")] = "fix",
    nu0: Annotated[float | None, typer.Option(help="nu (fix) or nu0 (ada); default: eq. 40.")] = None,
    labels: Annotated[str, typer.Option(help="true, or random (label-agnostic).")] = "true",
    inputs: Annotated[str, typer.Option(help="true, or gaussian (data-agnostic).")] = "true",
    seed: Annotated[int, typer.Option(help="Seed of weights, samples and batches.")] = 0,
    supernet_option: Annotated[
        list[str] | None, typer.Option("--supernet-option", help="Supernet option key=value, e.g. C=8.")
    ] = None,
    build_option: Annotated[
        list[str] | None,
        typer.Option(
            "--build-option", help="Exported network option key=value [default: the supernet's shape]."
        ),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Other NASI option key=value.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Directory for genotype.safetensors and model.onnx.")] = Path(
        "export/nasi"
    ),
    onnx: Annotated[bool, typer.Option("--onnx/--no-onnx", help="Also export the network as ONNX.")] = True,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Search with NASI (no training) on a dataset and export the derived architecture.

    Example: nasforge nasi --space nb201 --dataset digits --supernet-option C=8
    --supernet-option N=2 --out export/nasi-digits
    """
    registry = get_registry()
    sp = registry.get("space", space)()
    data = registry.get("dataset", dataset).load(seed=seed)
    supernet = parse_options(supernet_option)
    options: dict[str, Any] = {
        "steps": steps,
        "batch_size": batch_size,
        "mu": mu,
        "mode": mode,
        "nu0": nu0,
        "labels": labels,
        "inputs": inputs,
        "seed": seed,
        "supernet": supernet,
        **parse_options(option),
    }
    strategy = registry.get("strategy", "nasi")()
    started = time.perf_counter()
    outcome = strategy.fit(sp, data, **options)
    seconds = time.perf_counter() - started
    build = _build_options(build_option, supernet, data.num_classes, data.input_shape)
    files = _export(sp, outcome.best, out, (1, *data.input_shape), build, onnx)
    run = outcome.produced_by["run"]
    summary = {
        "method": "nasi",
        "best": sp.format(outcome.best),
        "best_genotype": outcome.best.to_json(),
        "seconds": round(seconds, 2),
        "nu0": run["nu0"],
        "violations": run["violations"],
        "fallback": run["fallback"],
        **files,
    }
    _print(summary, json_out)


def hnas(
    space: Annotated[str, typer.Option(help="Search space (nb201, darts, ...).")] = "nb201",
    evaluator: Annotated[str, typer.Option(help="Evaluator of each BO step.")] = "short-train",
    dataset: Annotated[str, typer.Option(help="Evaluator's dataset (nb201-table: cifar10...).")] = ("digits"),
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
    run_dir: Annotated[Path | None, typer.Option(help="Journal directory [default: runs/hnas-...].")] = None,
    out: Annotated[Path, typer.Option(help="Directory for genotype.safetensors and model.onnx.")] = Path(
        "export/hnas"
    ),
    onnx: Annotated[bool, typer.Option("--onnx/--no-onnx", help="Also export the network as ONNX.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Search with HNAS (pre-scored pool + BO over mu, nu), journaled, and export the best.

    Example: nasforge hnas --space nb201 --evaluator short-train --dataset digits
    --build-option C=8 --build-option N=1 --out export/hnas-digits
    """
    registry = get_registry()
    build = parse_options(build_option)
    strategy_options: dict[str, Any] = {"steps": steps, "build": dict(build)}
    evaluator_options = parse_options(evaluator_option)
    shape: tuple[int, ...] = (3, 32, 32)
    simulated = registry.get("evaluator", evaluator).simulated
    # a tabular benchmark's "dataset" names its table: the pool is then scored on
    # Gaussian data (data-agnostic); a training evaluator's data is scored directly
    if not simulated and dataset in registry.names("dataset"):
        data = registry.get("dataset", dataset).load(seed=seed)
        shape = data.input_shape
        strategy_options.update(data=dataset, input_shape=list(shape), num_classes=data.num_classes)
        strategy_options["build"].setdefault("num_classes", data.num_classes)
        strategy_options["build"].setdefault("in_channels", shape[0])
        evaluator_options.setdefault("build", dict(build))
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
    experiment = Experiment.from_spec(spec, run_dir=run_dir, progress=not quiet, console=err_console)
    outcome = experiment.run()
    seconds = time.perf_counter() - started
    sp = experiment.space
    export_build = dict(strategy_options["build"])
    files = _export(sp, outcome.best, out, (1, *shape), export_build, onnx)
    objective = experiment.evaluator.objective.name
    best = outcome.best_result
    summary = {
        "method": "hnas",
        "best": sp.format(outcome.best),
        "best_genotype": outcome.best.to_json(),
        objective: best.objectives.get(objective) if best else None,
        "trials": len(outcome.history),
        "seconds": round(seconds, 2),
        "run_dir": str(run_dir),
        **files,
    }
    _print(summary, json_out)


def _build_options(
    given: list[str] | None, supernet: dict[str, Any], num_classes: int, shape: tuple[int, ...]
) -> dict[str, Any]:
    """The exported network's options: the user's, else the supernet's shape options."""
    build = (
        parse_options(given) if given else {k: v for k, v in supernet.items() if k in SHARED_SHAPE_OPTIONS}
    )
    build.setdefault("num_classes", num_classes)
    if len(shape) == 3:
        build.setdefault("in_channels", shape[0])
    return build


def _export(
    space: SearchSpace,
    g: Genotype,
    out: Path,
    input_shape: tuple[int, ...],
    build: dict[str, Any],
    onnx: bool,
) -> dict[str, Any]:
    files: dict[str, Any] = {"genotype": str(export_genotype(g, out / "genotype.safetensors", space))}
    if onnx:
        try:
            report = export_onnx(g, out / "model.onnx", space, input_shape=input_shape, build_options=build)
        except TypeError as exc:  # a build option the space does not take
            raise NasforgeError(f"cannot build the exported network with {build}: {exc}") from exc
        files.update(onnx=str(report.path), max_abs_diff=report.max_abs_diff, build=build)
    return files


def _print(summary: dict[str, Any], json_out: bool) -> None:
    if json_out:
        print_json(summary)
        return
    table = Table(title=f"{summary['method']} finished", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for k, v in summary.items():
        if k not in ("method", "best_genotype"):
            table.add_row(k, f"{v:.4g}" if isinstance(v, float) else str(v))
    out_console.print(table)

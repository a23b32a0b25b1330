"""`nasforge search` and `nasforge resume`, for ask/tell and one-shot strategies alike.

A run of several objectives (``--objective`` twice or more) prints its Pareto front as a
table and draws it (``--plot``; by default ``RUN_DIR/pareto.png`` where matplotlib is
installed); ``--json`` carries the goal (``search_objectives``, ``constraints``) and the
``front``. ``objectives`` stays what it always was: every number of the best trial.
"""

from __future__ import annotations

import importlib.util
import math
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.result import Trial
from nasforge.run import defaults
from nasforge.run.api import build_spec
from nasforge.run.executors import DEFAULT_RETRIES, ExecutorOptions, check_executor_options
from nasforge.run.experiment import Experiment
from nasforge.run.journal import JournalReader
from nasforge.run.one_shot_run import OneShotRun, resume_one_shot, run_one_shot
from nasforge.tools.cli.common_options import Quiet, RayAddress, SearchDevice, command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json
from nasforge.tools.export.bundle import ExportBundle, _network_options, export_bundle
from nasforge.tools.export.ensemble_export import EnsembleExport, export_ensemble

OptionList = list[str] | None
#: Where a multi-objective run draws its front unless ``--plot`` says otherwise.
DEFAULT_PLOT = "pareto.png"
Plot = Annotated[
    Path | None,
    typer.Option(
        help="Draw a multi-objective run's Pareto front over every evaluated trial to this file "
        f"(png, svg, pdf; default: RUN_DIR/{DEFAULT_PLOT} when matplotlib is installed)."
    ),
]
Fuse = Annotated[
    bool,
    typer.Option(
        "--fuse/--no-fuse",
        help="With --export of an ensemble, also write ensemble.onnx: one graph running every member "
        "and averaging them, checked against onnxruntime.",
    ),
]
TrialCpus = Annotated[
    float,
    typer.Option("--trial-cpus", min=0.01, help="With --executor ray: CPUs each trial's Ray task asks for."),
]
TrialGpus = Annotated[
    float,
    typer.Option(
        "--trial-gpus",
        min=0.0,
        help="With --executor ray: GPUs each trial's Ray task asks for (0.5: two share one).",
    ),
]
Retries = Annotated[
    int,
    typer.Option(
        "--retries",
        min=0,
        help="Run a trial whose worker died (process or ray executor) again up to this many times; "
        "each retry is recorded in the trial's metadata, and a trial that still fails is a failed trial.",
    ),
]


def search(
    ctx: typer.Context,
    space: Annotated[
        str | None,
        typer.Option(help=f"Search space name (see `nasforge spaces`) (default: {defaults.SPACE})."),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(help=f"Strategy name (see `nasforge strategies`) (default: {defaults.STRATEGY})."),
    ] = None,
    evaluator: Annotated[
        str | None,
        typer.Option(
            help="Evaluator (see `nasforge evaluators`) "
            f"(default for ask/tell: {defaults.TABLE_EVALUATOR}, or {defaults.TRAINING_EVALUATOR} on a "
            "space the table does not hold; none for one-shot)."
        ),
    ] = None,
    train_data: Annotated[
        str | None,
        typer.Option(
            help="Data networks are trained on (see `nasforge datasets`): a one-shot strategy's "
            f"supernet, an evaluator that trains such as short-train (default: {defaults.TRAINING_DATASET})."
        ),
    ] = None,
    benchmark_dataset: Annotated[
        str | None,
        typer.Option(
            help="Dataset of the benchmark the evaluator reports on, e.g. nb201-table's cifar10, "
            f"cifar100 or imagenet16-120 (default: {defaults.TABLE_DATASET} for {defaults.TABLE_EVALUATOR})."
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="One name for either, as before --train-data and --benchmark-dataset: the training "
            "data of a one-shot strategy or of an evaluator that trains, else the benchmark dataset."
        ),
    ] = None,
    objective: Annotated[
        OptionList,
        typer.Option(
            "--objective",
            help="What to optimise, NAME:max or NAME:min, e.g. latency_ms:min (repeatable; two or more "
            "need a multi-objective strategy such as nsga2 or mo-random, and the run returns a Pareto "
            "front) (default: the evaluator's objective).",
        ),
    ] = None,
    constraint: Annotated[
        OptionList,
        typer.Option(
            "--constraint",
            help="A bound every reported architecture satisfies, NAME<=VALUE or NAME>=VALUE, e.g. "
            "'latency_ms<=12' (repeatable; quote it for the shell).",
        ),
    ] = None,
    budget_trials: Annotated[
        int | None, typer.Option(help="Stop after this many evaluated architectures (default: 100).")
    ] = None,
    budget_seconds: Annotated[float | None, typer.Option(help="Stop after this many wall seconds.")] = None,
    budget_sim_seconds: Annotated[
        float | None, typer.Option(help="Stop after this many simulated seconds (tabular evaluators).")
    ] = None,
    stop_when: Annotated[
        OptionList,
        typer.Option(
            "--stop-when",
            help="End the run early once a rule holds: NAME>=VALUE or NAME<=VALUE (a trial reached "
            "a target, e.g. 'valid_accuracy>=93'), time:SECONDS[:simulated] or plateau:TRIALS; "
            "join rules that must all hold with '&' (repeatable, any one stops; quote it for the "
            "shell). The journal records the rules and the reason the run stopped.",
        ),
    ] = None,
    stop_after_seconds: Annotated[
        float | None,
        typer.Option(
            help="End the run early after this many wall seconds (the stop rule time:SECONDS).",
        ),
    ] = None,
    stop_plateau: Annotated[
        int | None,
        typer.Option(
            min=1, help="End the run early once its best has not changed in this many trials (plateau:N)."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the strategy, the evaluator and the data (runs are reproducible).")
    ] = 0,
    device: SearchDevice = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(help="Journal directory (default: runs/SPACE-STRATEGY-sSEED-TIME)."),
    ] = None,
    option: Annotated[
        OptionList,
        typer.Option(
            "--option", "-o", help="Strategy option key=value, e.g. -o population_size=20 or -o epochs=5."
        ),
    ] = None,
    evaluator_option: Annotated[
        OptionList, typer.Option("--evaluator-option", help="Evaluator option key=value.")
    ] = None,
    space_option: Annotated[
        OptionList, typer.Option("--space-option", help="Space option key=value.")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Evaluations in flight at once (ask/tell).")] = 1,
    executor: Annotated[str, typer.Option(help="Executor: inprocess, process or ray.")] = "inprocess",
    asynchronous: Annotated[
        bool,
        typer.Option(
            "--async/--sync",
            help="--async: keep --workers trials in flight and tell the strategy each result as it "
            "arrives (no waiting for a round's slowest trial; the journal keeps the order, so a resume "
            "replays it exactly, but two runs may differ). --sync (default): rounds of --workers trials, "
            "the same run whatever executor runs it.",
        ),
    ] = False,
    ray_address: RayAddress = None,
    trial_cpus: TrialCpus = 1.0,
    trial_gpus: TrialGpus = 0.0,
    retries: Retries = DEFAULT_RETRIES,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Also write the best architecture here: genotype.safetensors + model.onnx (of an "
            "ensemble search: manifest.json + member_NN.onnx, and ensemble.onnx with --fuse)."
        ),
    ] = None,
    build_option: Annotated[
        OptionList, typer.Option("--build-option", help="Network option for --export, e.g. C=16.")
    ] = None,
    fuse: Fuse = True,
    plot: Plot = None,
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Search a space with a strategy, journaling every trial, and print the best architecture.

    Ask/tell (random, rea, local, ...), on the bundled NAS-Bench-201 table:

        nasforge search --space nb201 --strategy rea --benchmark-dataset cifar10 --budget-trials 200

    One-shot (darts, prdarts, nasi, ...), training a supernet on bundled data:

        nasforge search --space darts --strategy darts --train-data digits -o epochs=5 --export out/

    Several objectives, under a constraint: prints and draws the Pareto front:

        nasforge search --strategy nsga2 --objective valid_accuracy:max --objective latency_ms:min \
            --constraint 'params_mb<=0.5' --budget-trials 200

    On a running Ray cluster, four trials in flight, each told as it finishes:

        nasforge search --executor ray --ray-address 10.0.0.5:6379 --workers 4 --async --trial-gpus 1

    Kill it at any time and continue with `nasforge resume RUN_DIR`: an ask/tell run
    replays its journal (no finished trial lost or repeated); a one-shot run restarts.
    """
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
        executor=executor,
        workers=workers,
        objectives=objective,
        constraints=constraint,
        stop=_stop_rules(stop_when, stop_after_seconds, stop_plateau),
        registry=registry,
    )
    _check_plot(plot, len(spec.objectives))
    options = ExecutorOptions(
        address=ray_address, trial_cpus=trial_cpus, trial_gpus=trial_gpus, retries=retries
    )
    if spec.is_one_shot(registry) and (asynchronous or options != ExecutorOptions()):
        raise NasforgeError(
            f"'{spec.strategy}' is one-shot: --async, --ray-address, --trial-cpus/--trial-gpus and "
            "--retries apply to ask/tell strategies"
        )
    check_executor_options(registry.get("executor", spec.executor), options)
    if run_dir is None:
        run_dir = Path("runs") / f"{spec.space}-{spec.strategy}-s{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    if spec.is_one_shot(registry):
        run = run_one_shot(spec, run_dir=run_dir, registry=registry, progress=not quiet, console=err_console)
        _report_one_shot(run, export, build_option, json_out, fuse)
    else:
        experiment = Experiment.from_spec(
            spec,
            run_dir=run_dir,
            registry=registry,
            progress=not quiet,
            console=err_console,
            executor_options=options,
            asynchronous=asynchronous,
        )
        experiment.run()
        _report_ask_tell(experiment, export, build_option, json_out, plot)


def resume(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="The run directory holding journal.jsonl.")],
    export: Annotated[Path | None, typer.Option(help="Also export the best architecture here.")] = None,
    fuse: Fuse = True,
    plot: Plot = None,
    ray_address: RayAddress = None,
    trial_cpus: TrialCpus = 1.0,
    trial_gpus: TrialGpus = 0.0,
    retries: Retries = DEFAULT_RETRIES,
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")] = False,
) -> None:
    """Continue a killed search from its journal (finished trials are replayed, not re-run).

    It continues on the executor and workers it was started with, evaluated as it was
    (rounds, or --async); --ray-address may point a Ray run at another cluster."""
    registry = command_registry(ctx)
    header = JournalReader.of_run(run_dir).header
    options = ExecutorOptions(
        address=ray_address, trial_cpus=trial_cpus, trial_gpus=trial_gpus, retries=retries
    )
    if header.get("mode") == "one-shot" and options != ExecutorOptions():
        raise NasforgeError(
            "a one-shot run has no executor: --ray-address, --trial-cpus/--trial-gpus and --retries "
            "apply to ask/tell runs"
        )
    if header.get("mode") == "one-shot":
        run = resume_one_shot(run_dir, registry=registry, progress=not quiet, console=err_console)
        _check_plot(plot, 0)
        _report_one_shot(run, export, None, json_out, fuse)
        return
    spec_executor = (header.get("spec") or {}).get("executor", "inprocess")
    check_executor_options(registry.get("executor", spec_executor), options)
    experiment = Experiment.resume(
        run_dir, registry=registry, progress=not quiet, console=err_console, executor_options=options
    )
    _check_plot(plot, len(experiment.goal.objectives))
    experiment.run()
    _report_ask_tell(experiment, export, None, json_out, plot)


def _stop_rules(when: OptionList, seconds: float | None, plateau: int | None) -> list[str]:
    """The stop rules of ``--stop-when``, ``--stop-after-seconds`` and ``--stop-plateau``, as text."""
    rules = list(when or [])
    if seconds is not None:
        rules.append(f"time:{seconds:g}")
    if plateau is not None:
        rules.append(f"plateau:{plateau}")
    return rules


def _check_plot(plot: Path | None, objectives: int) -> None:
    """A ``--plot`` that cannot be drawn is refused before the search, not after it."""
    if plot is None:
        return
    if objectives < 2:
        raise NasforgeError("--plot draws a Pareto front: name two or more --objective")
    from nasforge.tools.pareto_plot import plot_format

    plot_format(plot)


def _export_ask_tell(best: Any, export: Path, evaluator: Any, build_option: OptionList) -> ExportBundle:
    """The best network as the evaluator built it: for the data's input shape and with the
    build options the data decided (in_channels, num_classes), the user's options winning."""
    build = {**(evaluator.build_options or {}), **parse_options(build_option)}
    shape = evaluator.input_shape
    if shape is None:
        return export_bundle(best, export, evaluator.space, build_options=build)
    return export_bundle(best, export, evaluator.space, input_shape=(1, *shape), build_options=build)


def _report_ask_tell(
    experiment: Experiment,
    export: Path | None,
    build_option: OptionList,
    json_out: bool,
    plot: Path | None = None,
) -> None:
    outcome = experiment.outcome
    assert outcome is not None
    space = experiment.space
    objective = experiment.evaluator.objective
    best = outcome.best_result
    value = best.objectives.get(objective.name) if best else None
    sim = sum(t.result.cost for t in outcome.history)
    bundle = _export_ask_tell(outcome.best, export, experiment.evaluator, build_option) if export else None
    reported = experiment.evaluator.reported
    rows: dict[str, Any] = {
        "best": space.format(outcome.best),
        "objective": objective.name,
        "value": value,
        # the protocol: chosen by the objective above, reported by this one
        "reported_objective": reported if reported != objective.name else None,
        "reported_value": best.objectives.get(reported) if best and reported != objective.name else None,
        "trials": len(outcome.history),
        "objectives": dict(best.objectives) if best else None,
        "simulated_seconds": sim if experiment.evaluator.simulated else None,
        "run_dir": str(experiment.run_dir),
        "search_objectives": experiment.goal.objective_texts(),
        "constraints": experiment.goal.constraint_texts(),
        # why the run ended before its budget: {rule, reason, trial}, else None
        "stopped": experiment.stopped,
        # the budget the evaluator can vary (short-train: epochs) and how much of it the
        # trials spent (a full evaluation counts its full budget): a multi-fidelity
        # search's cost; None for an evaluator without one
        "fidelity": experiment.evaluator.fidelity if experiment.fidelity_spent() is not None else None,
        "fidelity_spent": experiment.fidelity_spent(),
    }
    front = None
    if experiment.goal.multi_objective:
        front = [_front_row(k, t, space) for k, t in enumerate(outcome.front)]
        rows["front"] = front
        rows["plot"] = _draw_front(experiment, plot)
    _print(rows, outcome.best.to_json(), bundle, json_out)
    if front is not None and not json_out:
        _print_front(experiment, front)


def _front_row(member: int, trial: Trial, space: Any) -> dict[str, Any]:
    return {
        "member": member,
        "trial": trial.index,
        "genotype": space.format(trial.genotype),
        "objectives": dict(trial.result.objectives),
    }


def _draw_front(experiment: Experiment, plot: Path | None) -> str | None:
    """The front's plot: where ``--plot`` says (its failure is an error), else into the
    run directory where matplotlib is installed (its failure, e.g. read-only media, only
    a warning: the search itself succeeded)."""
    from nasforge.tools.pareto_plot import plot_front

    outcome = experiment.outcome
    assert outcome is not None
    if plot is None:
        if experiment.run_dir is None or importlib.util.find_spec("matplotlib") is None:
            return None
        try:
            path = plot_front(
                outcome.history, outcome.front, experiment.goal, experiment.run_dir / DEFAULT_PLOT
            )
        except NasforgeError as exc:
            err_console.print(f"[yellow]warning:[/] no front plot: {exc}", highlight=False)
            return None
        return str(path)
    return str(plot_front(outcome.history, outcome.front, experiment.goal, plot))


def _print_front(experiment: Experiment, front: list[dict[str, Any]]) -> None:
    """The front as a table: each member's objectives, and the number the protocol reports
    (test accuracy) where the run does not optimise it."""
    goal = experiment.goal
    names = [o.name for o in goal.objectives]
    reported = experiment.evaluator.reported
    shown = names + ([reported] if reported not in names else [])
    outcome = experiment.outcome
    assert outcome is not None
    title = f"Pareto front: {len(front)} of {len(outcome.history)} trials ({goal.describe()})"
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("trial", justify="right")
    for name in shown:
        arrow = (
            ""
            if name not in names
            else (" ↑" if goal.objectives[names.index(name)].higher_is_better else " ↓")
        )
        table.add_column(name + arrow, justify="right")
    table.add_column("architecture", overflow="fold")
    for row in front:
        values = row["objectives"]
        cells = [_number(values.get(name)) for name in shown]
        table.add_row(str(row["member"]), str(row["trial"]), *cells, row["genotype"])
    out_console.print(table)


def _number(value: Any) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "-"
    return f"{value:.4g}"


def _report_one_shot(
    run: OneShotRun, export: Path | None, build_option: OptionList, json_out: bool, fuse: bool = True
) -> None:
    space = run.space
    ensemble = run.outcome.ensemble
    bundle = None
    written = None
    if export and ensemble is not None:
        written = _export_ensemble(run, ensemble, export, build_option, fuse)
    elif export:
        bundle = export_bundle(
            run.outcome.best,
            export,
            space,
            input_shape=(1, *run.data.input_shape),
            num_classes=run.data.num_classes,
            build_options=parse_options(build_option),
        )
    rows: dict[str, Any] = {
        "best": space.format(run.outcome.best),
        "trials": len(run.outcome.history),  # epochs (DARTS) or samples (NASI)
        "data": run.data.name,
        "search_seconds": round(run.seconds, 2),
        "run_dir": str(run.run_dir),
    }
    if run.evaluation is not None:
        rows["evaluation"] = run.evaluation.objectives
    if ensemble is not None:
        rows["ensemble"] = {
            "method": ensemble.method,
            "size": len(ensemble),
            "combine": ensemble.combine,
            "objectives": dict(ensemble.objectives),
        }
        rows["members"] = member_rows(ensemble, space)
    if written is not None:
        rows["ensemble_dir"] = str(written.directory)
        rows["manifest_file"] = str(written.manifest)
        rows["member_files"] = [str(p) for p in written.members]
        rows["fused_file"] = str(written.fused) if written.fused is not None else None
        rows["onnx_max_abs_diff"] = written.max_abs_diff
    _print(rows, run.outcome.best.to_json(), bundle, json_out)
    if ensemble is not None and not json_out:
        _print_members(ensemble, rows["members"])


def _export_ensemble(
    run: OneShotRun, ensemble: Ensemble, export: Path, build_option: OptionList, fuse: bool
) -> EnsembleExport:
    """Every member as the single export builds the best: untrained, for the data's input
    shape and classes, the user's ``--build-option`` winning; checked against onnxruntime."""
    shape = (1, *run.data.input_shape)
    options = _network_options(run.space, shape, run.data.num_classes, parse_options(build_option))
    return export_ensemble(ensemble, export, run.space, input_shape=shape, build_options=options, fuse=fuse)


def member_rows(ensemble: Ensemble, space: Any) -> list[dict[str, Any]]:
    """One row per member, in order: its text and genotype, weight and scores."""
    return [
        {
            "member": i,
            "genotype": space.format(g),
            "genotype_json": g.to_json(),
            "weight": ensemble.weights[i],
            "scores": dict(ensemble.scores[i]) if ensemble.scores else {},
        }
        for i, g in enumerate(ensemble.members)
    ]


def _print_members(ensemble: Ensemble, members: list[dict[str, Any]]) -> None:
    """The members as a table: weight, each score the strategy recorded, the architecture."""
    names = list(dict.fromkeys(k for m in members for k in m["scores"]))
    shown = ", ".join(f"{k} {v:.4g}" for k, v in ensemble.objectives.items())
    title = f"ensemble: {len(members)} members ({ensemble.combine})" + (f"; {shown}" if shown else "")
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("weight", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("architecture", overflow="fold")
    for m in members:
        cells = [_number(m["scores"].get(name)) for name in names]
        table.add_row(str(m["member"]), f"{m['weight']:.3g}", *cells, m["genotype"])
    out_console.print(table)


def _print(
    rows: dict[str, Any], genotype: dict[str, Any], bundle: ExportBundle | None, json_out: bool
) -> None:
    if bundle is not None:
        rows["genotype_file"] = str(bundle.genotype_file)
        if bundle.onnx is not None:
            rows["onnx_file"] = str(bundle.onnx.path)
            rows["onnx_max_abs_diff"] = bundle.onnx.max_abs_diff
    if json_out:
        print_json({**rows, "best_genotype": genotype})
        return
    table = Table(title="search finished", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows.items():
        if value is None or key in ("front", "members") or (isinstance(value, list) and not value):
            continue
        if key == "ensemble":  # the members follow in their own table
            value = (
                f"{value['size']} members of {value['method'] or 'an ensemble search'}, {value['combine']}"
            )
        elif key == "member_files":
            value = f"{len(value)} in {Path(value[0]).parent}"
        if isinstance(value, list):  # the goal's objectives and constraints
            value = ", ".join(map(str, value))
        if key == "fidelity":  # named in the next row
            continue
        if key == "fidelity_spent":
            key, value = f"{rows['fidelity']} spent", f"{value} in all"
        elif key == "stopped":  # why a stop rule ended the run, in its own words
            key, value = "stopped early", f"{value['reason']} (rule {value['rule']})"
        elif isinstance(value, dict):  # every objective of the best trial
            value = ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in value.items()
            )
        elif key == "simulated_seconds":
            key, value = "simulated time", f"{value / 3600:.1f} h" if value >= 3600 else f"{value:.1f} s"
        elif isinstance(value, float):
            value = f"{value:.4g}"
        table.add_row(key.replace("_", " "), str(value))
    out_console.print(table)

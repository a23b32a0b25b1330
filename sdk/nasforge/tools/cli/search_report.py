"""What ``nasforge search`` and ``nasforge resume`` print when a run ends: the best (and a
multi-objective run's front, drawn too), an ensemble's members, and what was exported;
``--json`` gives the same as one document."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

from rich.table import Table

from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.result import Trial
from nasforge.run.defaults import strategy_default_note
from nasforge.run.experiment import Experiment
from nasforge.run.one_shot_run import OneShotRun
from nasforge.run.plugin_faults import FAULTS_KEY, PluginFault
from nasforge.run.trial_failures import FAILURES_KEY, TrialFailures
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json
from nasforge.tools.cli.search_options import DEFAULT_PLOT, OptionList
from nasforge.tools.export.bundle import ExportBundle, data_network_options, export_bundle
from nasforge.tools.export.ensemble_export import EnsembleExport, export_ensemble


def check_plot(plot: Path | None, objectives: int) -> None:
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


def report_ask_tell(
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
        # which strategy searched, and whether it was the default (no --strategy given)
        "strategy": experiment.spec.strategy,
        "strategy_default": "strategy" in experiment.defaults,
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
        # how many trials failed, and the first (its trial, genotype and error); None: none
        FAILURES_KEY: failures.to_json() if (failures := experiment.failures()) is not None else None,
        # plugins whose event hooks raised (the run went on without them)
        FAULTS_KEY: [f.to_json() for f in experiment.plugin_faults],
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


def report_one_shot(
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
        "strategy": _one_shot_strategy(run),
        "strategy_default": False,  # a search that names no strategy is an ask/tell one
        "trials": len(run.outcome.history),  # epochs (DARTS) or samples (NASI)
        "data": run.data.name,
        "search_seconds": round(run.seconds, 2),
        "run_dir": str(run.run_dir),
        FAULTS_KEY: [f.to_json() for f in run.plugin_faults],
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


def _one_shot_strategy(run: OneShotRun) -> str | None:
    """The strategy of a one-shot run, as its outcome or journal header records it."""
    spec = run.outcome.produced_by.get("spec")
    if not (isinstance(spec, dict) and spec.get("strategy")) and run.run_dir is not None:
        from nasforge.run.journal_file import JournalReader

        try:
            spec = JournalReader.of_run(run.run_dir).header.get("spec")
        except NasforgeError:
            spec = None
    return spec.get("strategy") if isinstance(spec, dict) else None


def _export_ensemble(
    run: OneShotRun, ensemble: Ensemble, export: Path, build_option: OptionList, fuse: bool
) -> EnsembleExport:
    """Every member as the single export builds the best: untrained, for the data's input
    shape and classes, the user's ``--build-option`` winning; checked against onnxruntime."""
    shape = (1, *run.data.input_shape)
    options = data_network_options(run.space, shape, run.data.num_classes, parse_options(build_option))
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
        if key == FAILURES_KEY:
            summary = TrialFailures.from_json(value)
            key, value = "failed trials", summary.line() if summary is not None else value
        elif key == FAULTS_KEY:  # each already warned on stderr during the run
            key, value = "plugin faults", "; ".join(PluginFault.from_json(f).line() for f in value)
        elif key == "ensemble":  # the members follow in their own table
            value = (
                f"{value['size']} members of {value['method'] or 'an ensemble search'}, {value['combine']}"
            )
        elif key == "member_files":
            value = f"{len(value)} in {Path(value[0]).parent}"
        if isinstance(value, list):  # the goal's objectives and constraints
            value = ", ".join(map(str, value))
        if key in ("fidelity", "strategy_default"):  # said in another row
            continue
        if key == "strategy" and rows.get("strategy_default"):
            value = strategy_default_note(value)
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

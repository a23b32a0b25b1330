"""`nasforge export` and `nasforge inspect`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from nasforge.cli.common_options import command_registry
from nasforge.cli.options import parse_options, parse_shape
from nasforge.cli.output import out_console, print_json
from nasforge.errors import JournalError, NasforgeError
from nasforge.export import export_bundle, inspect_file, load_genotype
from nasforge.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.export.path_probe import PathKind, probe_path
from nasforge.genotype import Genotype
from nasforge.journal import JournalReader
from nasforge.objectives import SearchGoal, goal_of_header
from nasforge.registry import Registry, get_registry
from nasforge.search_space import BUILD, SearchSpace


def resolve_genotype(
    source: str, space_name: str | None, registry: Registry | None = None, *, member: int | None = None
) -> tuple[SearchSpace, Genotype]:
    """A genotype from a string, a .safetensors file or a run directory (its best, or
    member ``member`` of a multi-objective run's Pareto front, counted from 0 as printed).

    Whether ``source`` is a path is asked of the filesystem, and a string it cannot even
    stat (longer than a file name may be, as every DARTS genotype is) is not a path.
    Spaces come from ``registry`` (the command's; the process-wide default if None).
    """
    registry = registry if registry is not None else get_registry()
    kind = probe_path(source)
    if kind is PathKind.DIRECTORY:
        return _from_run(Path(source), space_name, registry, member)
    if member is not None:
        raise NasforgeError("--member picks a member of a run's Pareto front: give a run directory")
    if kind is PathKind.FILE or Path(source).suffix == ".safetensors":
        g = load_genotype(source)
        space = registry.get("space", space_name or g.space)()
        space.validate(g)
        return space, g
    if space_name is None:
        raise NasforgeError("a genotype string needs --space (e.g. --space nb201)")
    space = registry.get("space", space_name)()
    return space, space.parse(source)


def _from_run(
    run_dir: Path, space_name: str | None, registry: Registry, member: int | None = None
) -> tuple[SearchSpace, Genotype]:
    """The best genotype of a run (or a front member); a journal lacking what it should
    hold is one line, not a crash."""
    try:
        reader = JournalReader.of_run(run_dir)
    except OSError as exc:
        raise JournalError(f"cannot read the journal of {run_dir}: {exc.strerror or exc}") from exc
    try:
        name = space_name or reader.header["space"]["name"]
        space = registry.get("space", name)()
        if member is not None:
            return space, _member_of(space, reader, member)
        return space, _best_of(space, reader)
    except NasforgeError:
        raise
    except KeyError as exc:
        raise JournalError(f"{reader.path}: a header or end record lacks the key {exc}") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise JournalError(f"{reader.path}: malformed header or end record ({_first_line(exc)})") from exc


def _best_of(space: SearchSpace, reader: JournalReader) -> Genotype:
    """The run's declared best if it finished, else the best feasible trial so far (under
    the run's objectives and constraints)."""
    if reader.end is not None and "best" in reader.end:
        best = Genotype.from_json(reader.end["best"])
    elif not reader.trials:
        raise NasforgeError(f"{reader.path} holds no finished trial")
    elif reader.header.get("mode") == "one-shot":
        best = _one_shot_best(reader)
    else:
        goal = _goal(reader)
        trial = goal.best(reader.trials) if goal is not None else None
        if goal is None or trial is None or not goal.feasible(trial.result):
            wanted = goal.describe() if goal is not None else "its objective"
            raise NasforgeError(f"{reader.path}: no trial so far satisfies {wanted}")
        best = trial.genotype
    space.validate(best)
    return best


def _one_shot_best(reader: JournalReader) -> Genotype:
    """An unfinished one-shot run: by the evaluator's objective where its trials carry it,
    else its latest derived architecture."""
    from nasforge.result import Objective, best_trial

    if reader.header.get("objective"):
        return best_trial(reader.trials, Objective(**reader.header["objective"])).genotype
    return reader.trials[-1].genotype


def _goal(reader: JournalReader) -> SearchGoal | None:
    try:
        return goal_of_header(reader.header)
    except JournalError as exc:
        raise JournalError(f"{reader.path}: {exc}") from exc


def _member_of(space: SearchSpace, reader: JournalReader, member: int) -> Genotype:
    """Member ``member`` of the run's Pareto front, as ``nasforge search`` printed it
    (recomputed from the trials, so an unfinished run has its front so far)."""
    goal = _goal(reader)
    if goal is None or not goal.multi_objective:
        raise NasforgeError(
            f"--member picks a member of a multi-objective run's front; {reader.path} has one objective"
        )
    front = goal.front(reader.trials)
    if not 0 <= member < len(front):
        raise NasforgeError(
            f"--member {member}: the front of {reader.path.parent} has {len(front)} members"
            + (f" (0..{len(front) - 1})" if front else "")
        )
    g = front[member].genotype
    space.validate(g)
    return g


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def export(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(help="A genotype string, a .safetensors genotype, or a run directory.")
    ],
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("export"),
    space: Annotated[str | None, typer.Option(help="Space of a genotype string (files know theirs).")] = None,
    onnx: Annotated[bool, typer.Option("--onnx/--no-onnx", help="Also export the network as ONNX.")] = True,
    input_shape: Annotated[str, typer.Option(help="Example input shape N,C,H,W for ONNX.")] = "1,3,32,32",
    build_option: Annotated[
        list[str] | None,
        typer.Option("--build-option", help="Network option key=value, e.g. num_classes=100."),
    ] = None,
    tolerance: Annotated[
        float, typer.Option(min=0.0, help="Absolute part of the accepted |torch - onnxruntime| (atol).")
    ] = DEFAULT_ATOL,
    rtol: Annotated[
        float,
        typer.Option(min=0.0, help="Relative part: x the largest |logit| of each sample (rtol)."),
    ] = DEFAULT_RTOL,
    member: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Of a multi-objective run, export member K of its Pareto front (numbered from 0 as "
            "`nasforge search` prints it) instead of its best (member 0).",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write a genotype as safetensors and its network as ONNX, checked with onnxruntime.

    Examples: nasforge export runs/my-run --out export/ ;
    nasforge export runs/my-mo-run --member 3 --out export/ ;
    nasforge export '|nor_conv_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|' --space nb201

    Both files appear together or not at all: a failed check leaves neither.
    """
    sp, g = resolve_genotype(source, space, command_registry(ctx), member=member)
    if onnx and BUILD not in sp.capabilities:
        raise NasforgeError(f"space '{sp.name}' cannot build a network to export: use --no-onnx")
    bundle = export_bundle(
        g,
        out,
        sp,
        input_shape=parse_shape(input_shape),
        build_options=parse_options(build_option),
        onnx=onnx,
        tolerance=tolerance,
        rtol=rtol,
    )
    result: dict[str, object] = {"genotype": str(bundle.genotype_file), "text": sp.format(g)}
    if member is not None:
        result["member"] = member
    report = bundle.onnx
    if report is not None:
        result.update(
            onnx=str(report.path),
            max_abs_diff=report.max_abs_diff,
            max_rel_error=report.max_rel_error,
            tolerance=report.tolerance,
            rtol=report.rtol,
            tolerance_used=report.tolerance_used,
            seconds=round(report.seconds, 3),
        )
    if json_out:
        print_json(result)
        return
    table = Table(title="exported", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for k, v in result.items():
        table.add_row(k, f"{v:.3g}" if isinstance(v, float) else str(v))
    out_console.print(table)


def inspect(
    path: Annotated[
        Path, typer.Argument(help="A .safetensors genotype, an .onnx model, or a run directory.")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Describe a nasforge genotype file, ONNX model or run directory."""
    info = inspect_file(path)
    if json_out:
        print_json(info)
        return
    table = Table(title=f"{info['kind']}: {path}", show_header=False)
    for k, v in info.items():
        if k == "front" and isinstance(v, list):
            table.add_row(k, "\n".join(_front_line(m) for m in v) or "-")
        elif k not in ("kind", "path"):
            table.add_row(k, ", ".join(map(str, v)) if isinstance(v, list) else str(v))
    out_console.print(table)


def _front_line(member: dict[str, object]) -> str:
    values = member.get("objectives") or {}
    shown = ", ".join(
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in values.items()  # type: ignore[union-attr]
    )
    text = member.get("text") or ""
    return f"#{member.get('member')} trial {member.get('trial')}: {shown} {text}".rstrip()

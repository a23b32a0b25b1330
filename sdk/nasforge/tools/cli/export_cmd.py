"""`nasforge export` and `nasforge inspect`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import BUILD
from nasforge.run.defaults import strategy_default_note
from nasforge.tools.cli.common_options import Device, Quiet, command_registry
from nasforge.tools.cli.options import parse_options, parse_shape
from nasforge.tools.cli.output import err_console, out_console, print_json
from nasforge.tools.export import export_bundle, inspect_file, resolve_genotype, run_build_options
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.tools.export.path_probe import PathKind, probe_path
from nasforge.tools.export.run_ensemble import RunEnsemble, export_run_ensemble, run_ensemble

#: The example input of a genotype string or file, which knows no data.
DEFAULT_INPUT_SHAPE = "1,3,32,32"


Source = Annotated[
    str, typer.Argument(help="A genotype string, a .safetensors genotype, or a run directory.")
]
Out = Annotated[Path, typer.Option(help="Output directory.")]
SpaceOfText = Annotated[str | None, typer.Option(help="Space of a genotype string (files know theirs).")]
Onnx = Annotated[bool, typer.Option("--onnx/--no-onnx", help="Also export the network as ONNX.")]
InputShape = Annotated[
    str | None,
    typer.Option(
        help="Example input shape N,C,H,W for ONNX (default: the run's data for an ensemble "
        f"run, else {DEFAULT_INPUT_SHAPE})."
    ),
]
BuildOption = Annotated[
    list[str] | None, typer.Option("--build-option", help="Network option key=value, e.g. num_classes=100.")
]
Tolerance = Annotated[
    float, typer.Option(min=0.0, help="Absolute part of the accepted |torch - onnxruntime| (atol).")
]
Rtol = Annotated[
    float, typer.Option(min=0.0, help="Relative part: x the largest |logit| of each sample (rtol).")
]
Member = Annotated[
    int | None,
    typer.Option(
        min=0,
        help="Of a multi-objective run, export member K of its Pareto front (numbered from 0 as "
        "`nasforge search` prints it) instead of its best (member 0); of an ensemble run, its "
        "member K alone.",
    ),
]
TrainEpochs = Annotated[
    int,
    typer.Option(
        min=0,
        help="Of an ensemble run: train every member from scratch for N epochs on the run's "
        "training data before export (SGD, momentum 0.9, cosine lr from 0.05); 0: untrained.",
    ),
]
FuseMembers = Annotated[
    bool,
    typer.Option(
        "--fuse/--no-fuse",
        help="Of an ensemble run: also write ensemble.onnx, one graph running every member and "
        "combining their probabilities.",
    ),
]
JsonOut = Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")]


def export(
    ctx: typer.Context,
    source: Source,
    out: Out = Path("export"),
    space: SpaceOfText = None,
    onnx: Onnx = True,
    input_shape: InputShape = None,
    build_option: BuildOption = None,
    tolerance: Tolerance = DEFAULT_ATOL,
    rtol: Rtol = DEFAULT_RTOL,
    member: Member = None,
    train_epochs: TrainEpochs = 0,
    fuse: FuseMembers = True,
    device: Device = "cpu",
    quiet: Quiet = False,
    json_out: JsonOut = False,
) -> None:
    """Write a genotype as safetensors and its network as ONNX, checked with onnxruntime.

    Examples: nasforge export runs/my-run --out export/ ;
    nasforge export runs/my-mo-run --member 3 --out export/ ;
    nasforge export runs/my-nesbs-run --train-epochs 15 --build-option C=8 --build-option N=1 --out ens/ ;
    nasforge export '|nor_conv_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|' --space nb201

    Both files appear together or not at all: a failed check leaves neither. A run that
    found an ensemble (nesbs) is exported as `nasforge search --export` exports it:
    manifest.json, member_NN.onnx and ensemble.onnx, written together.
    """
    registry = command_registry(ctx)
    found = run_ensemble(source, registry, space) if probe_path(source) is PathKind.DIRECTORY else None
    if found is not None:
        if member is not None and train_epochs:
            raise NasforgeError("--train-epochs trains the whole ensemble: drop --member")
        if member is None and not onnx:
            raise NasforgeError(
                "an ensemble export is ONNX files: --no-onnx applies to one member (--member K)"
            )
        if member is None:
            _export_ensemble_run(
                found, out, registry, input_shape, build_option, tolerance, rtol, train_epochs, fuse, device,
                quiet, json_out,
            )  # fmt: skip
            return
        if not 0 <= member < len(found.ensemble):
            raise NasforgeError(
                f"--member {member}: the ensemble of {source} has {len(found.ensemble)} members "
                f"(0..{len(found.ensemble) - 1})"
            )
    elif train_epochs:
        raise NasforgeError("--train-epochs trains the members of an ensemble run: give such a run directory")
    if found is not None and member is not None:
        sp, g = found.space, found.ensemble.members[member]
        if input_shape is None and found.input_shape is not None:
            input_shape = ",".join(map(str, (1, *found.input_shape)))
    else:
        sp, g = resolve_genotype(source, space, registry, member=member)
    shape = parse_shape(input_shape or DEFAULT_INPUT_SHAPE)
    # a run's own network options first (what its search built), the command's over them
    build = {**run_build_options(source), **parse_options(build_option)}
    result = _export_genotype(sp, g, out, shape, build, onnx, tolerance, rtol, member)
    if json_out:
        print_json(result)
        return
    _print_facts("exported", result)


def _export_genotype(
    sp: Any,
    g: Any,
    out: Path,
    shape: tuple[int, ...],
    build: dict[str, Any],
    onnx: bool,
    tolerance: float,
    rtol: float,
    member: int | None,
) -> dict[str, object]:
    """One genotype's files (genotype, and its network as ONNX), and what was written."""
    if onnx and BUILD not in sp.capabilities:
        raise NasforgeError(f"space '{sp.name}' cannot build a network to export: use --no-onnx")
    bundle = export_bundle(
        g, out, sp, input_shape=shape, build_options=build, onnx=onnx, tolerance=tolerance, rtol=rtol
    )
    result: dict[str, object] = {"genotype": str(bundle.genotype_file), "text": sp.format(g)}
    if build:
        result["build"] = dict(build)
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
    return result


def _export_ensemble_run(
    found: RunEnsemble,
    out: Path,
    registry: Registry,
    input_shape: str | None,
    build_option: list[str] | None,
    tolerance: float,
    rtol: float,
    train_epochs: int,
    fuse: bool,
    device: str,
    quiet: bool,
    json_out: bool,
) -> None:
    """The ensemble export of a run (members trained first with ``train_epochs``), and
    what was written, as the single export prints it plus one row per member."""
    if BUILD not in found.space.capabilities:
        raise NasforgeError(f"space '{found.space.name}' cannot build the members' networks to export")
    with _TrainingBar(len(found.ensemble), train_epochs, not quiet and train_epochs > 0) as bar:
        written, data = export_run_ensemble(
            found,
            out,
            registry,
            train_epochs=train_epochs,
            input_shape=parse_shape(input_shape) if input_shape else None,
            build_options=parse_options(build_option),
            fuse=fuse,
            tolerance=tolerance,
            rtol=rtol,
            device=device,
            on_data=bar.data,
            on_epoch=bar,
        )
    ens = found.ensemble
    result: dict[str, Any] = {
        "ensemble_dir": str(written.directory),
        "manifest": str(written.manifest),
        "members": [str(p) for p in written.members],
        "fused": None if written.fused is None else str(written.fused),
        "method": ens.method,
        "combine": ens.combine,
        "weights": "untrained" if data is None else f"trained {train_epochs} epochs on {data.name}",
        "max_abs_diff": written.max_abs_diff,
        "seconds": round(written.seconds, 3),
    }
    if data is not None:
        result["train_examples"] = len(data)
    if json_out:
        print_json(result)
        return
    _print_facts("exported ensemble", result)


class _TrainingBar:
    """Progress of training the members (epochs of all members, which member now); where
    no bar is live on a terminal, the count goes to the log every few seconds instead."""

    def __init__(self, members: int, epochs: int, enabled: bool) -> None:
        self.members, self.epochs, self.enabled = members, epochs, enabled
        self.total = members * epochs
        self.done = 0
        self.progress: Progress | None = None
        self.log = ProgressLog(
            "nasforge.export",
            "training the ensemble's members",
            self.total,
            unit="epoch",
            silent=bar_is_live(enabled, err_console),
        )

    def __enter__(self) -> _TrainingBar:
        if self.enabled:
            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                TextColumn("epochs"),
                TimeElapsedColumn(),
                console=err_console,
            )
            self.progress.start()
            self.task = self.progress.add_task(f"member 1/{self.members}", total=self.total)
        return self

    def data(self, data: TensorData) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=f"member 1/{self.members} on {data.name}")

    def __call__(self, member: int, epoch: int, log: dict[str, float]) -> None:
        self.done = member * self.epochs + epoch
        detail = f"member {member + 1}/{self.members}, train loss {log.get('loss', float('nan')):.3f}"
        self.log.update(self.done, detail)
        if self.progress is not None:
            self.progress.update(
                self.task, completed=self.done, description=f"member {member + 1}/{self.members}"
            )

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
        if exc[0] is None:
            self.log.finish(self.done)


def inspect(
    path: Annotated[
        Path,
        typer.Argument(
            help="A .safetensors genotype or weights file, an .onnx model, a run directory, an "
            "export directory, or an ensemble export (its directory or manifest.json)."
        ),
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Describe a nasforge genotype file, ONNX model, weights file, run directory or export.

    Says whether a model is trained, on what data and to what held-out accuracy
    (`nasforge train`), and of a run the strategy (and whether it was the default) and
    the best score. An ensemble export is verified first (manifest, every member's checksum): a damaged
    one is refused in one line.
    """
    info = inspect_file(path)
    if json_out:
        print_json(info)
        return
    table = Table(title=f"{info['kind']}: {path}", show_header=False)
    table.add_column()
    table.add_column(overflow="fold")
    for k, v in info.items():
        if k == "front" and isinstance(v, list):
            table.add_row(k, "\n".join(_front_line(m) for m in v) or "-")
        elif k == "members" and isinstance(v, list):
            table.add_row(k, "\n".join(_member_line(m) for m in v) or "-")
        elif k == "ensemble" and isinstance(v, dict):  # of a run
            table.add_row(k, f"{len(v['members'])} members of {v.get('method')}, {v.get('combine')}")
            if v.get("objectives"):
                table.add_row("ensemble objectives", _numbers(v["objectives"]))
            table.add_row("members", "\n".join(_member_line(m) for m in v["members"]) or "-")
        elif k == "fused" and isinstance(v, dict):
            table.add_row(k, f"{v.get('file')} (parity max |diff| {_number(v.get('parity_max_abs_diff'))})")
        elif isinstance(v, dict) and k in ("objectives", "normalisation", "tolerance", "best_score"):
            table.add_row(k.replace("_", " "), _numbers(v))
        elif k == "strategy_default":
            continue  # said on the strategy's row
        elif k == "strategy" and info.get("strategy_default"):
            table.add_row(k, strategy_default_note(str(v)))
        elif k == "trained" and isinstance(v, dict):  # of a run: what `nasforge train` recorded
            table.add_row(
                k,
                f"{v.get('epochs')} epochs on {v.get('data')}: held-out accuracy "
                f"{_number(v.get('heldout_accuracy'))} % ({v.get('heldout')})",
            )
        elif k == "heldout_accuracy":
            table.add_row("held-out accuracy", f"{_number(v)} % ({info.get('heldout')})")
        elif k == "heldout":
            continue  # said with the accuracy
        elif k not in ("kind", "path"):
            table.add_row(k, ", ".join(map(_number, v)) if isinstance(v, list) else str(v))
    out_console.print(table)


def _number(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _numbers(values: dict) -> str:
    return ", ".join(
        f"{k} {_number(v)}" if not isinstance(v, list) else f"{k} {v}" for k, v in values.items()
    )


def _member_line(member: dict) -> str:
    """``#i [file] w=weight scores [parity] text`` for an ensemble member."""
    parts = [f"#{member.get('member')}"]
    if member.get("file"):
        parts.append(str(member["file"]))
    parts.append(f"w={_number(member.get('weight'))}")
    if member.get("scores"):
        parts.append(_numbers(member["scores"]))
    if member.get("parity_max_abs_diff") is not None:
        parts.append(f"parity {_number(member['parity_max_abs_diff'])}")
    if member.get("weights"):
        parts.append(f"({member['weights']})")
    return " ".join(parts) + f": {member.get('text') or '-'}"


def _front_line(member: dict[str, Any]) -> str:
    values = member.get("objectives") or {}
    shown = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items())
    text = member.get("text") or ""
    return f"#{member.get('member')} trial {member.get('trial')}: {shown} {text}".rstrip()


def _print_facts(title: str, result: dict[str, Any]) -> None:
    """What an export wrote, as a two-column table (a list of paths one a line)."""
    table = Table(title=title, show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for k, v in result.items():
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            shown = "\n".join(v)
        else:
            shown = f"{v:.3g}" if isinstance(v, float) else str(v)
        table.add_row(k, shown)
    out_console.print(table)

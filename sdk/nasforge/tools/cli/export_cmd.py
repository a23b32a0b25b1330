"""`nasforge export` and `nasforge inspect`.

``export`` parses its flags, calls :func:`nasforge.api.export` (which makes every check,
with one message) and prints what was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.run.defaults import strategy_default_note
from nasforge.run.plugin_faults import FAULTS_KEY, PluginFault
from nasforge.run.trial_failures import FAILURES_KEY, TrialFailures
from nasforge.tools.cli.common_options import Device, Quiet, command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json
from nasforge.tools.export.input_shape import DEFAULT_INPUT_SHAPE as TRACE_SHAPE
from nasforge.tools.export.tolerance import DEFAULT_ATOL, DEFAULT_RTOL

if TYPE_CHECKING:
    from nasforge.kernel.datasets import TensorData

#: The example input of a genotype string or file, which knows no data.
DEFAULT_INPUT_SHAPE = ",".join(map(str, TRACE_SHAPE))


Source = Annotated[
    str, typer.Argument(help="A genotype string, a .safetensors genotype, or a run directory.")
]
Out = Annotated[Path, typer.Option(help="Output directory.")]
SpaceOfText = Annotated[
    str | None, typer.Option(help="Space of a genotype string, or PATH.py:NAME (files know theirs).")
]
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
Tolerance = Annotated[float, typer.Option(help="Absolute part of the accepted |torch - onnxruntime| (atol).")]
Rtol = Annotated[float, typer.Option(help="Relative part: x the largest |logit| of each sample (rtol).")]
Member = Annotated[
    int | None,
    typer.Option(
        metavar="K",
        help="Of a multi-objective run, export member K of its Pareto front (numbered from 0 as "
        "`nasforge search` prints it) instead of its best (member 0); of an ensemble run, its "
        "member K alone.",
    ),
]
TrainEpochs = Annotated[
    int,
    typer.Option(
        metavar="N",
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
    from nasforge import api  # torch loads here, not for --help
    from nasforge.tools.export.api import RunEnsembleExport

    with _TrainingBar(not quiet) as bar:
        result = api.export(
            source,
            out,
            space=space,
            onnx=onnx,
            input_shape=input_shape,
            build_options=parse_options(build_option),
            tolerance=tolerance,
            rtol=rtol,
            member=member,
            train_epochs=train_epochs,
            fuse=fuse,
            device=device,
            on_training=bar.start,
            on_epoch=bar,
            registry=command_registry(ctx),
        )
    if json_out:
        print_json(result.to_json())
        return
    _print_facts(
        "exported ensemble" if isinstance(result, RunEnsembleExport) else "exported", result.to_json()
    )


class _TrainingBar:
    """Progress of training an ensemble's members (epochs of all members, which member
    now), started when training starts; where no bar is live on a terminal, the count
    goes to the log every few seconds instead."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.members = self.epochs = self.total = self.done = 0
        self.progress: Progress | None = None
        self.log: ProgressLog | None = None

    def __enter__(self) -> _TrainingBar:
        return self

    def start(self, data: TensorData, members: int, epochs: int) -> None:
        self.members, self.epochs, self.total = members, epochs, members * epochs
        self.log = ProgressLog(
            "nasforge.export",
            "training the ensemble's members",
            self.total,
            unit="epoch",
            silent=bar_is_live(self.enabled, err_console),
        )
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
            self.task = self.progress.add_task(f"member 1/{members} on {data.name}", total=self.total)

    def __call__(self, member: int, epoch: int, log: dict[str, float]) -> None:
        self.done = member * self.epochs + epoch
        detail = f"member {member + 1}/{self.members}, train loss {log.get('loss', float('nan')):.3f}"
        if self.log is not None:
            self.log.update(self.done, detail)
        if self.progress is not None:
            self.progress.update(
                self.task, completed=self.done, description=f"member {member + 1}/{self.members}"
            )

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
        if exc[0] is None and self.log is not None:
            self.log.finish(self.done)


def inspect(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(
            help="A .safetensors genotype or weights file, an .onnx model, a run directory, an "
            "export directory, or an ensemble export (its directory or manifest.json)."
        ),
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
    space: Annotated[
        str | None,
        typer.Option(
            help="Of a genotype file only: read it with this space (a name, PATH.py:NAME or "
            "package.module:NAME), made with the options the file records, and show its text as "
            "the space writes it (a file written without its space, or whose space file moved). "
            "Runs, exports and models name their own space."
        ),
    ] = None,
) -> None:
    """Describe a nasforge genotype file, ONNX model, weights file, run directory or export.

    Says whether a model is trained, on what data and to what held-out accuracy
    (`nasforge train`), and of a run the strategy (and whether it was the default) and
    the best score. An ensemble export is verified first (manifest, every member's checksum): a damaged
    one is refused in one line.
    """
    from nasforge.tools.export import inspect_file

    registry = command_registry(ctx) if space is not None else None
    info = inspect_file(path, space=space, registry=registry)
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
        elif k == FAILURES_KEY and isinstance(v, dict):
            summary = TrialFailures.from_json(v)
            table.add_row("failed trials", summary.line() if summary is not None else str(v))
        elif k == FAULTS_KEY and isinstance(v, list):
            table.add_row("plugin faults", "\n".join(PluginFault.from_json(f).line() for f in v))
        elif k == "strategy_default":
            continue  # said on the strategy's row
        elif k in ("finished", "stopped") and "ended" in info:
            continue  # said in words on the row "ended" (--json keeps both)
        elif k == "best" and v is None:
            continue  # an unended run: "ended" says so, "best score" shows the best so far
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

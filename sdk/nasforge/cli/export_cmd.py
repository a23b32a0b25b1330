"""`nasforge export` and `nasforge inspect`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from nasforge.cli.common_options import command_registry
from nasforge.cli.options import parse_options, parse_shape
from nasforge.cli.output import out_console, print_json
from nasforge.errors import NasforgeError
from nasforge.export import export_bundle, inspect_file, resolve_genotype
from nasforge.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.search_space import BUILD


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
        Path,
        typer.Argument(
            help="A .safetensors genotype, an .onnx model, a run directory, or an ensemble export "
            "(its directory or manifest.json)."
        ),
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Describe a nasforge genotype file, ONNX model, run directory or ensemble export.

    An ensemble export is verified first (manifest, every member's checksum): a damaged
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
        elif isinstance(v, dict) and k in ("objectives", "normalisation", "tolerance"):
            table.add_row(k, _numbers(v))
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


def _front_line(member: dict[str, object]) -> str:
    values = member.get("objectives") or {}
    shown = ", ".join(
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in values.items()  # type: ignore[union-attr]
    )
    text = member.get("text") or ""
    return f"#{member.get('member')} trial {member.get('trial')}: {shown} {text}".rstrip()

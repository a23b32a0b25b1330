"""``python -m nasforge_darts``: one-command DARTS / PR-DARTS searches on a CPU.

``search`` runs a search, journals it and exports the derived genotype (safetensors) and
model (ONNX); ``nb201-compare`` runs DARTS and PR-DARTS over several seeds on the
NAS-Bench-201 supernet and reports skip share and table accuracy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import torch
import typer
from rich.console import Console
from rich.table import Table

from nasforge.atomic_files import atomic_write_text
from nasforge.cli.options import parse_options
from nasforge.errors import NasforgeError

app = typer.Typer(
    name="nasforge_darts",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help=__doc__,
)
err = Console(stderr=True)
out = Console()


@app.command()
def search(
    out_dir: Annotated[Path, typer.Option("--out", help="Run directory for journal and exports.")],
    strategy: Annotated[str, typer.Option(help="darts or prdarts.")] = "prdarts",
    space: Annotated[str, typer.Option(help="darts or nb201.")] = "darts",
    dataset: Annotated[str, typer.Option(help="A registered dataset (see `nasforge datasets`).")] = "digits",
    preset: Annotated[str | None, typer.Option(help="PR-DARTS preset: paper or official-code.")] = None,
    order: Annotated[int | None, typer.Option(help="DARTS order: 1 or 2.")] = None,
    epochs: Annotated[int, typer.Option(help="Search epochs.")] = 10,
    batch_size: Annotated[int, typer.Option(help="Batch size of both steps.")] = 64,
    width: Annotated[int, typer.Option("--C", help="Supernet width C.")] = 4,
    cells: Annotated[int, typer.Option(help="Supernet cells (darts) or cells per stage N (nb201).")] = 3,
    arch_lr: Annotated[float, typer.Option(help="Adam lr of the architecture parameters.")] = 3e-3,
    seed: Annotated[int, typer.Option(help="Seed (runs are reproducible).")] = 0,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="Extra key=value.")] = None,
    export_width: Annotated[int, typer.Option(help="C of the exported network.")] = 16,
    export_depth: Annotated[int, typer.Option(help="Cells (darts) or N (nb201) of the export.")] = 5,
    onnx: Annotated[bool, typer.Option(help="Export and check the ONNX model.")] = True,
    threads: Annotated[int, typer.Option(help="torch intra-op threads (1 is fastest here).")] = 1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Search, journal, and export the derived genotype and its ONNX model.

    Example: python -m nasforge_darts search --strategy prdarts --epochs 10 --out runs/digits
    """
    from nasforge_darts.run_search import search_and_export

    torch.set_num_threads(threads)
    opts: dict[str, Any] = {"epochs": epochs, "batch_size": batch_size, "arch_lr": arch_lr}
    if space == "darts":
        opts.update(supernet={"C": width}, darts_layers=cells)
    else:
        opts.update(supernet={"C": width, "N": cells})
    if preset is not None:
        opts["preset"] = preset
    if order is not None:
        opts["order"] = order
    opts.update(parse_options(option))
    run = search_and_export(
        space=space,
        strategy=strategy,
        dataset=dataset,
        run_dir=out_dir,
        seed=seed,
        strategy_options=opts,
        export_width=export_width,
        export_depth=export_depth,
        onnx=onnx,
        progress=not quiet,
        console=err,
    )
    metrics = run.outcome.best_result.metadata["metrics"] if run.outcome.best_result else {}
    summary = {
        "genotype": run.outcome.best_result.metadata["genotype"] if run.outcome.best_result else "",
        "genotype_file": str(run.genotype_file),
        "onnx_file": str(run.onnx_file) if run.onnx_file else None,
        "onnx_max_abs_diff": run.onnx_max_abs_diff,
        "seconds": round(run.seconds, 1),
        "val_accuracy": metrics.get("val_accuracy"),
        "derived_val_accuracy": metrics.get("derived_val_accuracy"),
    }
    if json_out:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    table = Table(title=f"{strategy} on {space} / {dataset}", show_header=False)
    for k, val in summary.items():
        table.add_row(k, f"{val:.4g}" if isinstance(val, float) else str(val))
    out.print(table)


@app.command("nb201-compare")
def nb201_compare(
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    epochs: Annotated[int, typer.Option(help="Search epochs per run.")] = 50,
    width: Annotated[int, typer.Option("--C", help="Supernet width C.")] = 8,
    cells: Annotated[int, typer.Option(help="Cells per stage N.")] = 1,
    arch_lr: Annotated[float, typer.Option(help="Adam lr of the architecture parameters.")] = 3e-4,
    batch_size: Annotated[
        int | None, typer.Option(help="Batch size of both strategies (default: each its own, 64 / preset's).")
    ] = None,
    preset: Annotated[str, typer.Option(help="PR-DARTS preset.")] = "official-code",
    threads: Annotated[int, typer.Option(help="torch intra-op threads.")] = 1,
    json_file: Annotated[Path | None, typer.Option("--json-file", help="Write rows here.")] = None,
) -> None:
    """DARTS vs PR-DARTS on the NB201 supernet: skip share and benchmark accuracy."""
    from nasforge_darts.nb201_compare import TABLE_DATASETS, compare_on_nb201, summarise

    torch.set_num_threads(threads)
    common = {
        "epochs": epochs,
        "arch_lr": arch_lr,
        "supernet": {"C": width, "N": cells},
        "eval_every": epochs,
    }
    if batch_size is not None:
        common["batch_size"] = batch_size
    rows = compare_on_nb201(
        seeds=[int(s) for s in seeds.split(",")],
        strategies=(("darts", {}), ("prdarts", {"preset": preset})),
        common=common,
    )
    table = Table(title="NB201 supernet search on digits; accuracies from the benchmark table")
    for col in ("strategy", "seed", "skip share", *TABLE_DATASETS, "cell"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.strategy,
            str(r.seed),
            f"{r.skip_share:.2f}",
            *(f"{r.accuracy[d]:.2f}" for d in TABLE_DATASETS),
            r.genotype,
        )
    out.print(table)
    summary = summarise(rows)
    for label, stats in summary.items():
        parts = [f"skip share {stats['skip_share_mean']:.2f}±{stats['skip_share_std']:.2f}"]
        parts += [f"{d} {stats[d + '_mean']:.2f}±{stats[d + '_std']:.2f}" for d in TABLE_DATASETS]
        out.print(f"{label}: " + ", ".join(parts))
    if json_file is not None:
        payload = {"rows": [r.to_json() for r in rows], "summary": summary, "settings": common}
        try:
            atomic_write_text(json_file, json.dumps(payload, indent=2))
        except OSError as exc:
            raise NasforgeError(f"cannot write {json_file}: {exc.strerror or exc}") from exc


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors print one line and exit with status 2."""
    try:
        app(args=argv, prog_name="python -m nasforge_darts")
    except NasforgeError as exc:
        err.print(f"[red]error:[/] {exc}", highlight=False)
        sys.exit(2)

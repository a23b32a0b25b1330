"""``nasforge darts-compare``: DARTS vs PR-DARTS over seeds, cells rated by a tabular benchmark.

Added to the CLI by this plugin's command hook, so it goes when the plugin does. A search
alone needs no command of its own: ``nasforge search --strategy darts|prdarts`` runs it,
journals it and, with ``--export``, writes the genotype and ONNX files.

Every name (space, table evaluator, training data, the two strategies) resolves through
the invocation's registry (``command_registry``), handed down to the comparison.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.files import atomic_write_text
from nasforge.run import defaults
from nasforge.tools.cli.common_options import command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import json_document, out_console, print_json


def darts_compare(
    ctx: typer.Context,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    epochs: Annotated[int, typer.Option(min=1, help="Search epochs per run.")] = 50,
    width: Annotated[int, typer.Option("--C", min=1, help="Supernet width C.")] = 8,
    cells: Annotated[int, typer.Option(min=1, help="Supernet cells per stage (its option N).")] = 1,
    arch_lr: Annotated[float, typer.Option(help="Adam lr of the architecture parameters.")] = 3e-4,
    batch_size: Annotated[
        int | None,
        typer.Option(min=1, help="Batch size of both strategies (default: each its own, 64 / preset's)."),
    ] = None,
    preset: Annotated[str, typer.Option(help="PR-DARTS preset.")] = "official-code",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Option key=value of both strategies (after the ones above)."),
    ] = None,
    space: Annotated[str, typer.Option(help="Space whose supernet is searched.")] = defaults.SPACE,
    evaluator: Annotated[
        str, typer.Option(help="Tabular evaluator that rates the derived cells.")
    ] = defaults.TABLE_EVALUATOR,
    table_dataset: Annotated[
        list[str] | None,
        typer.Option("--table-dataset", help="Dataset of the table to report (default: its three)."),
    ] = None,
    dataset: Annotated[
        str, typer.Option(help="Training data of the searches (see `nasforge datasets`).")
    ] = defaults.TRAINING_DATASET,
    json_file: Annotated[Path | None, typer.Option("--json-file", help="Also write rows here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print rows and summary as JSON.")] = False,
) -> None:
    """DARTS vs PR-DARTS on a supernet, cells rated by a tabular benchmark: skip share, accuracy.

    Defaults are DARTS's search values (50 epochs, architecture Adam lr 3e-4) on a small
    supernet (C=8, 1 cell per stage; the papers search C=16 on CIFAR-10). -o order=2 gives
    both strategies the second-order architecture gradient.

    The README's figures use a proxy budget, not the paper's values: nasforge darts-compare
    --seeds 0,1,2,3,4,5,6,7,8,9 --epochs 150 --C 8 --cells 1 --arch-lr 3e-3 --batch-size 64
    (10x DARTS's architecture lr over 150 epochs of 14 digits batches = DARTS's CIFAR-10
    architecture movement; benchmarks/darts_skip_nb201.py).
    """
    import torch  # here, not for --help

    from nasforge_darts.table_compare import TABLE_DATASETS, compare_on_table, summarise, without_zero_rows

    registry = command_registry(ctx)
    for kind, name in (("space", space), ("evaluator", evaluator), ("dataset", dataset)):
        registry.get(kind, name)  # an unknown name is one line now, not after the first search
    common: dict[str, Any] = {
        "epochs": epochs,
        "arch_lr": arch_lr,
        "supernet": {"C": width, "N": cells},
        "eval_every": epochs,
    }
    if batch_size is not None:
        common["batch_size"] = batch_size
    common.update(parse_options(option))
    datasets = tuple(table_dataset) if table_dataset else TABLE_DATASETS
    strategies: tuple[tuple[str, dict[str, Any]], ...] = (("darts", {}), ("prdarts", {"preset": preset}))
    rows = compare_on_table(
        seeds=_seeds(seeds),
        strategies=strategies,
        space=space,
        evaluator=evaluator,
        table_datasets=datasets,
        dataset=dataset,
        common=common,
        registry=registry,
    )
    shown = [*rows, *without_zero_rows(rows)]  # + "darts without none", from the same searches
    summary = summarise(shown)
    payload = {"rows": [r.to_json() for r in rows], "summary": summary, "settings": common}
    if json_file is not None:
        try:
            document = json_document(payload, command="darts-compare")  # the --json document, as a file
            atomic_write_text(json_file, json.dumps(document, indent=2))
        except OSError as exc:
            raise NasforgeError(f"cannot write {json_file}: {exc.strerror or exc}") from exc
    if json_out:
        print_json(payload)
        return
    table = Table(title=f"searched on {dataset}; accuracies from the {evaluator} table")
    for col in ("strategy", "seed", "skip share", *datasets, "cell"):
        table.add_column(col)
    for r in shown:
        accuracy = (f"{r.accuracy[d]:.2f}" for d in datasets)
        table.add_row(r.strategy, str(r.seed), f"{r.skip_share:.2f}", *accuracy, r.genotype)
    out_console.print(table)
    paper = (
        "" if (epochs, arch_lr) == (50, 3e-4) else " (DARTS's own: 50 epochs, arch lr 3e-4: these are not)"
    )
    out_console.print(f"search settings: {json.dumps(common)}{paper}")
    # a seed fixes the cell only at a fixed thread count (the floats differ from the first steps)
    out_console.print(f"torch threads: {torch.get_num_threads()} (the README's figures: 1)")
    for label, stats in summary.items():
        parts = [f"skip share {stats['skip_share_mean']:.2f}±{stats['skip_share_std']:.2f}"]
        parts += [f"{d} {stats[d + '_mean']:.2f}±{stats[d + '_std']:.2f}" for d in datasets]
        out_console.print(f"{label}: " + ", ".join(parts))


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise NasforgeError(f"--seeds takes comma-separated integers, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise NasforgeError(f"--seeds takes non-negative integers, got {text!r}")
    return seeds

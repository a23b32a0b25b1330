"""`nasforge train RUN_DIR|GENOTYPE_FILE`: train the chosen architecture from scratch.

A thin face of :func:`nasforge.api.train` (:mod:`nasforge.tools.winner`): it parses,
calls and prints. Every refusal (a source that names nothing, data that cannot be read,
a recipe setting out of range, CUDA asked for where there is none, a checkpoint of
another training) is one line and exit status 2, before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from nasforge.run.training.recipe import AUGMENTS, TrainRecipe
from nasforge.tools.cli.common_options import Quiet, command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, out_console, print_json

_WHAT = "What to train"
_RECIPE = "Recipe"
_OUT = "Checkpoints and output"
_DEFAULT = TrainRecipe()


Source = Annotated[
    str,
    typer.Argument(
        help="A run directory (trains its best), a .safetensors genotype file, or a genotype "
        "string (with --space).",
        show_default=False,
    ),
]
TrainData = Annotated[
    str | None,
    typer.Option(
        help="Data to train on: a dataset name (see `nasforge datasets`) or the path of your "
        ".npz/.pt/.safetensors file or image folder (default: the run's own).",
        rich_help_panel=_WHAT,
    ),
]
SpaceOfText = Annotated[
    str | None, typer.Option(help="Space of a genotype string, or PATH.py:NAME.", rich_help_panel=_WHAT)
]
Member = Annotated[
    int | None,
    typer.Option(
        min=0, help="Of a multi-objective run: member K of its Pareto front.", rich_help_panel=_WHAT
    ),
]
BuildOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--build-option",
        help="Network option key=value over the run's, e.g. C=16 (repeatable).",
        rich_help_panel=_WHAT,
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        min=0,
        help="Seed of the weights, batch order and augmentation (default: the run's, else 0).",
        rich_help_panel=_WHAT,
    ),
]
Device = Annotated[str, typer.Option(help="cpu, cuda or cuda:N.", rich_help_panel=_WHAT)]
Epochs = Annotated[int, typer.Option(min=1, help="Epochs.", rich_help_panel=_RECIPE)]
BatchSize = Annotated[int, typer.Option(min=1, help="Batch size.", rich_help_panel=_RECIPE)]
LearningRate = Annotated[
    float, typer.Option(min=0.0, help="Learning rate, annealed to 0 by a cosine.", rich_help_panel=_RECIPE)
]
Momentum = Annotated[float, typer.Option(min=0.0, help="SGD momentum (Nesterov).", rich_help_panel=_RECIPE)]
WeightDecay = Annotated[float, typer.Option(min=0.0, help="Weight decay.", rich_help_panel=_RECIPE)]
Augmentation = Annotated[
    str,
    typer.Option(
        "--augment",
        help=f"{', '.join(AUGMENTS)}: auto shifts images by up to 1/8 of their size, "
        "shift-flip also mirrors them; other data is never augmented.",
        rich_help_panel=_RECIPE,
    ),
]
HoldoutFraction = Annotated[
    float,
    typer.Option(
        help="Share held out to report on when the data has no test split.", rich_help_panel=_RECIPE
    ),
]
CheckpointDir = Annotated[
    Path | None,
    typer.Option(
        help="Checkpoint and result.json (default: RUN_DIR/trained, else runs/train-...). "
        "Run the command again after a kill to continue.",
        rich_help_panel=_OUT,
    ),
]
Restart = Annotated[
    bool, typer.Option("--restart", help="Drop the checkpoint there and start over.", rich_help_panel=_OUT)
]
ExportDir = Annotated[
    Path | None,
    typer.Option(
        "--export",
        help="Write genotype.safetensors, weights.safetensors and model.onnx (the trained "
        "weights, checked with onnxruntime) to this directory.",
        rich_help_panel=_OUT,
    ),
]
JsonOut = Annotated[bool, typer.Option("--json", help="Print the result as JSON.", rich_help_panel=_OUT)]


def train(
    ctx: typer.Context,
    source: Source,
    train_data: TrainData = None,
    space: SpaceOfText = None,
    member: Member = None,
    build_option: BuildOptions = None,
    seed: Seed = None,
    device: Device = "cpu",
    epochs: Epochs = _DEFAULT.epochs,
    batch_size: BatchSize = _DEFAULT.batch_size,
    lr: LearningRate = _DEFAULT.lr,
    momentum: Momentum = _DEFAULT.momentum,
    weight_decay: WeightDecay = _DEFAULT.weight_decay,
    augment: Augmentation = _DEFAULT.augment,
    holdout_fraction: HoldoutFraction = _DEFAULT.holdout_fraction,
    checkpoint_dir: CheckpointDir = None,
    restart: Restart = False,
    export: ExportDir = None,
    quiet: Quiet = False,
    json_out: JsonOut = False,
) -> None:
    """Train the architecture a search chose from scratch, report its held-out accuracy
    and optionally export it with its trained weights.

    It trains on the run's data (or --train-data) and reports accuracy on the data's test
    split (MNIST-1D's test set, x_test/y_test in your file), else on a share held out.
    Recipe: SGD, momentum 0.9 (Nesterov), lr 0.05 cosine to 0, weight decay 3e-4, batch
    64, gradients clipped at norm 5, 30 epochs; images shifted by up to 1/8 of their size.
    A checkpoint after every epoch: run the same command again after a kill and it
    continues to the same weights.

    Examples: nasforge train runs/my-run --export out/ ;
    nasforge train best.safetensors --train-data data/mine.npz --epochs 50 ;
    nasforge train runs/my-run --device cuda
    """
    from nasforge.tools.winner import train_winner  # torch loads here, not for --help

    registry = command_registry(ctx)
    recipe = TrainRecipe(
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        momentum=momentum,
        nesterov=momentum > 0,
        weight_decay=weight_decay,
        augment=augment,
        holdout_fraction=holdout_fraction,
    )
    trained = train_winner(
        source,
        train_data=train_data,
        space=space,
        member=member,
        recipe=recipe,
        seed=seed,
        device=device,
        build_options=parse_options(build_option),
        checkpoint_dir=checkpoint_dir,
        restart=restart,
        export=export,
        registry=registry,
        progress=not quiet,
        console=err_console,
    )
    record = trained.to_json()
    if json_out:
        print_json({k: v for k, v in record.items() if k != "format"})
        return
    _print(record)


def _print(record: dict[str, Any]) -> None:
    held = record["heldout"]
    rows: dict[str, str] = {
        "architecture": f"{record['genotype']} ({record['source']})",
        "trained on": f"{record['data']['name']}, {record['data']['examples']:,} examples",
        "recipe": record["recipe_text"] + f", seed {record['seed']}, {record['device']}",
        "train accuracy": f"{record['train_accuracy']:.2f} % (last epoch, augmented)",
        "held-out accuracy": f"{held['accuracy']:.2f} % on {held['examples']:,} examples ({held['from']})",
        "parameters": f"{record['parameters']:,}",
        "time": f"{record['seconds']:.1f} s"
        + (f" (continued after epoch {record['resumed_from']})" if record["resumed_from"] else ""),
        "checkpoint": record["checkpoint_dir"],
    }
    if held.get("seen_by_search"):
        rows["held-out accuracy"] += "; the search chose on this data, so it may be optimistic"
    written = record.get("export")
    if written:
        rows["exported"] = "\n".join(
            [written["genotype_file"], written["weights_file"], written["onnx_file"]]
        )
        rows["onnxruntime"] = (
            f"held-out accuracy {written['onnx_heldout_accuracy']:.2f} %, "
            f"max |diff| {written['onnx_max_abs_diff']:.3g}"
        )
    table = Table(title="trained", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows.items():
        table.add_row(key, value)
    out_console.print(table)

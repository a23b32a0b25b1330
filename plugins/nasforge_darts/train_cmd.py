"""``nasforge darts-train``: train a derived cell's network from scratch, the papers' way.

A thin layer over :func:`nasforge_darts.eval_trainer.train_derived`: it resolves the
genotype (a published name, a genotype string, an exported ``.safetensors`` file or a run
directory), loads the data (sklearn's digits, or CIFAR-10 from a local directory), picks
the preset and prints the result. Every refusal (an unknown name, a missing CIFAR
directory, a bad option, CUDA asked for where there is none) is one line, before training.

On a GPU, the published CIFAR-10 number of a cell is reproduced by::

    nasforge darts-train --genotype DARTS-V2 --dataset cifar10 \
        --data-dir ~/data/cifar-10-batches-py --preset paper --device cuda --out runs/darts-v2
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.registry import Registry
from nasforge.tools.cli.common_options import Quiet, command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import err_console, json_document, out_console, print_json
from nasforge_darts.published import PUBLISHED

if TYPE_CHECKING:  # torch and the networks load when the command runs, not for --help
    from nasforge.kernel.genotype import Genotype
    from nasforge_darts.cifar_local import ImageSplits

DATASETS = ("digits", "cifar10")
#: The preset each dataset gets unless --preset says otherwise.
DEFAULT_PRESET = {"digits": "cpu-tiny", "cifar10": "paper"}
RESULT = "result.json"


def published_names() -> list[str]:
    """The published cells as the command spells them (DARTS-V1, DARTS-V2, PR-DARTS)."""
    return [name.replace("_", "-") for name in PUBLISHED]


def resolve_darts_genotype(source: str, registry: Registry | None = None) -> Genotype:
    """A DARTS-space genotype from a published name (any case, '-' or '_'), a genotype
    string, a ``.safetensors`` genotype file or a run directory (its best)."""
    from nasforge.tools.export import resolve_genotype
    from nasforge_darts.space import DartsSpace

    key = source.strip().upper().replace("-", "_")
    if key in PUBLISHED:
        return DartsSpace().parse(PUBLISHED[key])
    if "(" not in source and not _exists(source) and not source.endswith(".safetensors"):
        raise NasforgeError(
            f"unknown genotype {source!r}: give a published name ({', '.join(published_names())}), "
            "a genotype string, a .safetensors genotype file or a run directory"
        )
    found_space, g = resolve_genotype(source, "darts", registry)
    if not isinstance(found_space, DartsSpace):
        raise NasforgeError(f"darts-train trains DARTS-space cells, not '{found_space.name}' genotypes")
    return g


def _exists(source: str) -> bool:
    """Whether ``source`` names an existing file or directory (a string the filesystem
    cannot even stat, e.g. longer than a file name may be, names none)."""
    try:
        return Path(source).exists()
    except (OSError, ValueError):
        return False


def load_data(dataset: str, data_dir: Path | None, *, limit: int | None = None) -> ImageSplits:
    """The dataset's training and test images (digits needs no directory)."""
    from nasforge_darts.cifar_local import load_cifar10
    from nasforge_darts.eval_trainer import digits_splits

    if dataset == "digits":
        if data_dir is not None:
            raise NasforgeError("--data-dir is for --dataset cifar10 (digits ships with scikit-learn)")
        return digits_splits()
    if dataset == "cifar10":
        default = Path(os.environ.get("NASFORGE_DATA", Path.home() / ".nasforge" / "data"))
        return load_cifar10(data_dir if data_dir is not None else default, limit=limit)
    raise NasforgeError(f"unknown --dataset {dataset!r} (choose from {', '.join(DATASETS)})")


def darts_train(
    ctx: typer.Context,
    genotype: Annotated[
        str,
        typer.Option(
            help="The cell: a published name (DARTS-V1, DARTS-V2, PR-DARTS), a genotype string, "
            "a .safetensors genotype file or a run directory."
        ),
    ],
    dataset: Annotated[str, typer.Option(help="digits (CPU-sized) or cifar10 (from --data-dir).")] = "digits",
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="CIFAR-10's cifar-10-batches-py directory, or the one holding it "
            "(default: $NASFORGE_DATA, else ~/.nasforge/data). Never downloaded."
        ),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            help="paper (DARTS's CIFAR-10 recipe) or cpu-tiny "
            "(default: paper on cifar10, cpu-tiny on digits)."
        ),
    ] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Epochs (default: the preset's).")] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Setting key=value, e.g. -o C=16 -o batch_size=128."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=2, help="Use only the first N images of each split (smoke runs).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Directory for the per-epoch checkpoint (resumed if there) and result.json."),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, max=2**31 - 1, help="Seed of the weights, batch order and augmentation.")
    ] = 0,
    device: Annotated[str, typer.Option(help="cpu, cuda or cuda:N.")] = "cpu",
    quiet: Quiet = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Train a derived DARTS cell from scratch (aux head, drop-path, cutout) and report test error.

    Example (GPU): nasforge darts-train --genotype DARTS-V2 --dataset cifar10
    --data-dir ~/data/cifar-10-batches-py --preset paper --device cuda --out runs/darts-v2
    """
    import torch

    from nasforge.kernel.device import resolve_device
    from nasforge_darts.eval_trainer import train_derived, train_settings

    registry = command_registry(ctx)
    if dataset not in DATASETS:
        raise NasforgeError(f"unknown --dataset {dataset!r} (choose from {', '.join(DATASETS)})")
    g = resolve_darts_genotype(genotype, registry)
    overrides = parse_options(option)
    if epochs is not None:
        overrides["epochs"] = epochs
    settings = train_settings(preset or DEFAULT_PRESET[dataset], **overrides)
    dev = resolve_device(device)  # "cuda" without CUDA is one line here, not after loading
    if dataset == "digits" and limit is not None:
        raise NasforgeError("--limit is for --dataset cifar10 (digits is small already)")
    data = load_data(dataset, data_dir, limit=limit)
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True  # fixed input sizes: as DARTS's train.py does
    result = train_derived(
        g, data, settings, seed=seed, device=dev, out=out, progress=not quiet, console=err_console
    )
    payload = result.to_json()
    if out is not None:
        payload["result_file"] = str(out / RESULT)
        document = json_document(payload, command="darts-train")
        try:
            atomic_write_text(out / RESULT, json.dumps(document, indent=2, sort_keys=True))
        except OSError as exc:
            raise NasforgeError(f"cannot write {out / RESULT}: {exc.strerror or exc}") from exc
    if json_out:
        print_json(payload)
        return
    out_console.print(
        f"{dataset}, preset {settings.preset}, {settings.epochs} epochs"
        + (f" (resumed after epoch {result.resumed_from})" if result.resumed_from else "")
        + f", {result.parameters / 1e6:.3f}M parameters: "
        f"test accuracy {100 * result.test_accuracy:.2f} %, test error {result.test_error:.2f} %"
    )

"""Train the chosen architecture from scratch and report it on held-out data: the step
after a search (``nasforge train``, ``nasforge.api.train``).

A search ranks architectures cheaply (a few epochs, shared weights, a table); what a user
deploys is the winner trained properly. This takes the architecture from a run directory
or a genotype file (:mod:`~nasforge.tools.winner.source`), the run's data or the given
data with a held-out split (:mod:`~nasforge.tools.winner.data_split`), trains it by a
:class:`~nasforge.run.training.recipe.TrainRecipe` with a checkpoint after every epoch
(:mod:`~nasforge.run.training.checkpointed`: a killed training started again continues
to the same weights), reports the held-out accuracy, writes ``result.json`` beside the
checkpoint and, with ``export``, the trained weights (safetensors) and an ONNX model that
carries them, checked against onnxruntime on the held-out data too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import attrs
import torch
from rich.console import Console
from torch import nn

from nasforge.kernel.datasets import build_option_names, network_options
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.seeding import seeded_build
from nasforge.run.training import evaluate
from nasforge.run.training.checkpointed import CHECKPOINT, check_fits, train_checkpointed
from nasforge.run.training.recipe import TrainRecipe
from nasforge.tools.export.ensemble_export import run_onnx
from nasforge.tools.export.trained_export import TrainedExport, export_trained
from nasforge.tools.winner.data_split import WinnerData, winner_data
from nasforge.tools.winner.source import WinnerSource, resolve_source

logger = logging.getLogger("nasforge.train")

#: What a training writes beside its checkpoint, and what ``nasforge inspect`` reads.
RESULT_FILE = "result.json"
RESULT_FORMAT = "nasforge.train-result/1"
#: Where a run directory's winner is trained unless told otherwise.
RUN_SUBDIR = "trained"


@attrs.frozen(eq=False)
class TrainedWinner:
    """A trained architecture, what it was trained on and how well it does held out."""

    model: nn.Module = attrs.field(repr=False)
    record: dict[str, Any]
    export: TrainedExport | None = None

    @property
    def heldout_accuracy(self) -> float:
        """Top-1 accuracy (percent) on the held-out data."""
        return float(self.record["heldout"]["accuracy"])

    @property
    def checkpoint_dir(self) -> Path:
        return Path(self.record["checkpoint_dir"])

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.record))


def train_winner(
    source: str | os.PathLike[str],
    *,
    train_data: Any = None,
    heldout_data: Any = None,
    space: str | None = None,
    member: int | None = None,
    recipe: TrainRecipe | dict[str, Any] | None = None,
    seed: int | None = None,
    device: str = "cpu",
    build_options: dict[str, Any] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    restart: bool = False,
    export: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
    progress: bool = False,
    console: Console | None = None,
) -> TrainedWinner:
    """Train the architecture ``source`` names from scratch; see the module docstring.

    ``source``: a run directory (its best; ``member`` K of a multi-objective run's
    front), a ``.safetensors`` genotype file, or a genotype string with ``space``.
    ``train_data``: a dataset name or path, or data in memory (as ``api.search`` takes
    it); default the run's own. ``seed``: default the run's (0 for a file).
    ``build_options`` override the network options the search used. ``checkpoint_dir``:
    default ``RUN_DIR/trained`` for a run, else ``runs/train-...``; ``restart`` drops
    a checkpoint there instead of continuing it. Bad input raises a
    :class:`~nasforge.kernel.errors.NasforgeError` before anything is written.
    """
    registry = registry if registry is not None else get_registry()
    if not isinstance(recipe, TrainRecipe):
        recipe = TrainRecipe.from_json(dict(recipe or {}))
    found = resolve_source(source, registry, space_name=space, member=member)
    seed = found.seed if seed is None else _seed(seed)
    data = _data(found, train_data, heldout_data, registry, seed, recipe)
    dev = resolve_device(device)  # "cuda" without one is one line, before any training
    options = _network_options(found, data, build_options)
    where = Path(checkpoint_dir) if checkpoint_dir is not None else _default_dir(found, data, seed)
    if where.exists() and not where.is_dir():
        raise NasforgeError(f"--checkpoint-dir {where} is a file, not a directory")
    if restart:
        (where / CHECKPOINT).unlink(missing_ok=True)
    # the network must take the data before anything is said or written
    probe = seeded_build(lambda: build_network(found.space, found.genotype, options), seed)
    check_fits(probe, data.train, found.text)
    fingerprint = {
        "space": found.space.name,
        "genotype": found.text,
        "build_options": json.loads(json.dumps(options, sort_keys=True)),
        "train": data.train.digest(),
        "heldout": data.heldout.digest(),
    }
    logger.info(
        "training %s (%s) on %s: %s; held out: %s",
        found.text,
        found.origin,
        f"{len(data.train):,} examples of {data.train.name}",
        recipe.describe(data.train.input_shape),
        data.heldout_from,
    )
    trained = train_checkpointed(
        found.space,
        found.genotype,
        data.train,
        recipe,
        seed=seed,
        device=dev,
        build_options=options,
        checkpoint_dir=where,
        fingerprint=fingerprint,
        progress=progress,
        console=console,
    )
    model = trained.model
    loss, accuracy = evaluate(model, data.heldout.x.to(dev), data.heldout.y.to(dev))
    record = _record(found, data, recipe, seed, dev, options, trained, loss, accuracy, where)
    written = None
    if export is not None:
        written = _export(model, found, data, options, record, Path(export))
    atomic_write_text(where / RESULT_FILE, json.dumps(record, indent=2, sort_keys=True))
    logger.info(
        "trained %d epochs in %.1f s: held-out accuracy %.2f %% on %s",
        recipe.epochs,
        record["seconds"],
        100.0 * accuracy,
        data.heldout_from,
    )
    return TrainedWinner(model, record, written)


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise OptionError(f"seed must be a non-negative integer, got {value!r}")
    return value


def _data(
    found: WinnerSource, given: Any, heldout: Any, registry: Registry, seed: int, recipe: TrainRecipe
) -> WinnerData:
    """The given data, else the run's (refused when it no longer has the digest the run
    recorded: the architecture was chosen on that data)."""
    given_by_user = given is not None  # the run's data named again is the user's choice too
    if given is None:
        if found.train_data is None:
            where = "searched without training data" if found.run_dir else "names no data"
            raise NasforgeError(f"{found.origin} {where}: give the data to train on (--train-data NAME|PATH)")
        if found.train_data.startswith("memory:"):
            raise NasforgeError(
                f"run {found.run_dir} trained on data given in memory: train it from Python with "
                "nasforge.api.train(RUN_DIR, train_data=...)"
            )
        given = found.train_data
    elif isinstance(given, os.PathLike):
        given = os.fspath(given)
    data = winner_data(given, registry, seed=seed, holdout_fraction=recipe.holdout_fraction, heldout=heldout)
    if not given_by_user and found.data_digest not in (None, data.loaded_digest):
        raise NasforgeError(
            f"{found.train_data} now loads other data (digest {data.loaded_digest}) than run "
            f"{found.run_dir} searched on ({found.data_digest}); give it with --train-data to train "
            "on it anyway"
        )
    # a share held out of the data can only flatter the architecture if a search chose it on
    # that same data: a table search, or a search on other data, never saw these examples
    searched_here = found.run_dir is not None and (
        found.data_digest == data.loaded_digest if found.data_digest else given == found.train_data
    )
    return attrs.evolve(data, heldout_seen_by_search=data.heldout_seen_by_search and searched_here)


def _network_options(found: WinnerSource, data: WinnerData, given: dict[str, Any] | None) -> dict[str, Any]:
    """The search's network options, the data's channels and classes over them (where the
    space takes them), the caller's over both."""
    accepted = build_option_names(found.space)
    decided = network_options(data.train.input_shape, data.train.num_classes, accepted=accepted)
    return {**found.build_options, **decided, **(given or {})}


def _default_dir(found: WinnerSource, data: WinnerData, seed: int) -> Path:
    if found.run_dir is not None:
        return found.run_dir / RUN_SUBDIR
    digest = hashlib.sha256(found.text.encode()).hexdigest()[:10]
    return Path("runs") / f"train-{found.space.name}-{digest}-{Path(data.train.name).stem}-s{seed}"


def _record(
    found: WinnerSource,
    data: WinnerData,
    recipe: TrainRecipe,
    seed: int,
    dev: torch.device,
    options: dict[str, Any],
    trained: Any,
    loss: float,
    accuracy: float,
    where: Path,
) -> dict[str, Any]:
    last = trained.history[-1] if trained.history else {}
    return {
        "format": RESULT_FORMAT,
        "space": found.space.name,
        "genotype": found.text,
        "genotype_json": found.genotype.to_json(),
        "source": found.origin,
        "run_dir": None if found.run_dir is None else str(found.run_dir),
        "data": {"name": data.name, "digest": data.train.digest(), "examples": len(data.train)},
        "heldout": {
            "name": data.heldout.name,
            "from": data.heldout_from,
            "seen_by_search": data.heldout_seen_by_search,
            "examples": len(data.heldout),
            "digest": data.heldout.digest(),
            "accuracy": 100.0 * accuracy,
            "loss": loss,
        },
        "recipe": recipe.to_json(),
        "recipe_text": recipe.describe(data.train.input_shape),
        "seed": seed,
        "device": str(dev),
        "build_options": json.loads(json.dumps(options, sort_keys=True)),
        "parameters": sum(p.numel() for p in trained.model.parameters()),
        "epochs": len(trained.history),
        "train_loss": last.get("loss"),
        "train_accuracy": None if "accuracy" not in last else 100.0 * last["accuracy"],
        "history": list(trained.history),
        "seconds": round(trained.seconds, 3),
        "resumed_from": trained.resumed_from,
        "checkpoint_dir": str(where),
        "trained": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def weights_note(record: dict[str, Any]) -> str:
    """What a trained model's weights are, in a line (its files' ``weights`` metadata)."""
    held = record["heldout"]
    return (
        f"trained {record['epochs']} epochs on {record['data']['name']} "
        f"({record['data']['examples']} examples, seed {record['seed']}); held-out accuracy "
        f"{held['accuracy']:.2f} % on {held['examples']} examples ({held['from']})"
    )


def _export(
    model: nn.Module,
    found: WinnerSource,
    data: WinnerData,
    options: dict[str, Any],
    record: dict[str, Any],
    out: Path,
) -> TrainedExport:
    """The trained network's files, and onnxruntime's accuracy on the held-out data."""
    metadata = {
        "trained_on": record["data"]["name"],
        "trained_epochs": str(record["epochs"]),
        "heldout_accuracy": f"{record['heldout']['accuracy']:.4f}",
        "heldout": f"{record['heldout']['examples']} examples, {record['heldout']['from']}",
        "recipe": json.dumps(record["recipe"], sort_keys=True),
    }
    written = export_trained(
        model.cpu(),
        found.genotype,
        found.space,
        out,
        input_shape=(1, *data.train.input_shape),
        build_options=options,
        weights=weights_note(record),
        metadata=metadata,
    )
    logits = torch.cat(
        [run_onnx(written.onnx_file, data.heldout.x[i : i + 512]) for i in range(0, len(data.heldout), 512)]
    )
    onnx_accuracy = 100.0 * float((logits.argmax(-1) == data.heldout.y).double().mean())
    record["export"] = {
        "directory": str(out),
        "genotype_file": str(written.genotype_file),
        "weights_file": str(written.weights_file),
        "onnx_file": str(written.onnx_file),
        "onnx_max_abs_diff": written.onnx.max_abs_diff,
        "onnx_heldout_accuracy": onnx_accuracy,
    }
    return written

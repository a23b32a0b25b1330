"""The Python face of the main CLI tasks: one call per command, same defaults.

Searching is defined in :mod:`nasforge.run.api`, scoring and correlating in
:mod:`nasforge.tools.scoring.api`, exporting in :mod:`nasforge.tools.export.api`, training
the chosen architecture in :mod:`nasforge.tools.winner`; this is the name to import them
by. Each makes every check its command makes, with one message.
"""

from __future__ import annotations

import os
from typing import Any

from nasforge.run.api import DEFAULT_TRIALS, build_spec, load_space, resume, search
from nasforge.run.training.recipe import TrainRecipe
from nasforge.tools.export.api import GenotypeExport, RunEnsembleExport, export
from nasforge.tools.scoring.api import Scores, correlate, score
from nasforge.tools.winner import TrainedWinner, train_winner

__all__ = [
    "DEFAULT_TRIALS",
    "GenotypeExport",
    "RunEnsembleExport",
    "Scores",
    "TrainRecipe",
    "TrainedWinner",
    "build_spec",
    "correlate",
    "export",
    "load_space",
    "resume",
    "score",
    "search",
    "train",
]


def train(
    source: str | os.PathLike[str],
    *,
    train_data: Any = None,
    heldout_data: Any = None,
    space: str | None = None,
    member: int | None = None,
    epochs: int | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
    momentum: float | None = None,
    nesterov: bool | None = None,
    weight_decay: float | None = None,
    grad_clip: float | None = None,
    augment: str | None = None,
    holdout_fraction: float | None = None,
    recipe: TrainRecipe | None = None,
    seed: int | None = None,
    device: str = "cpu",
    build_options: dict[str, Any] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    restart: bool = False,
    export: str | os.PathLike[str] | None = None,
    progress: bool = False,
    registry: Any = None,
) -> TrainedWinner:
    """Train the architecture a search chose from scratch (the Python twin of ``nasforge train``).

    ``source`` is a run directory (its best; ``member`` K of a multi-objective run's
    Pareto front), a ``.safetensors`` genotype file, or a genotype string with ``space``.
    It trains on ``train_data`` (a dataset name or path, or data in memory as
    :func:`search` takes it; default the run's own data, refused if it changed since the
    search) and reports top-1 accuracy on held-out data: the data's test split where it
    has one (``x_test``/``y_test``, MNIST-1D's test set), else ``holdout_fraction`` of it
    drawn by the seed (or ``heldout_data``).

    The recipe (:class:`~nasforge.run.training.recipe.TrainRecipe`; each keyword
    overrides one of its settings, ``recipe`` gives them all): 30 epochs of SGD, momentum
    0.9 (Nesterov), lr 0.05 cosine to 0, weight decay 3e-4, batch 64, gradients clipped
    at norm 5; images shifted by up to an eighth of their size (``augment``: auto, none,
    shift, shift-flip). The network is built with the run's network options
    (``build_options`` override them) from ``seed`` (default: the run's).

    A checkpoint is written after every epoch to ``checkpoint_dir`` (default
    ``RUN_DIR/trained``, else ``runs/train-...``); called again after a kill, it
    continues to the same weights (``restart=True`` starts over). ``result.json`` there
    records the outcome. ``export`` writes ``genotype.safetensors``,
    ``weights.safetensors`` and ``model.onnx`` (the trained weights, checked against
    onnxruntime) to that directory. Returns a :class:`~nasforge.tools.winner.TrainedWinner`
    (``model``, ``heldout_accuracy``, ``record``, ``export``). Bad input raises a
    :class:`~nasforge.kernel.errors.NasforgeError` before anything is written.
    """
    given = {
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "momentum": momentum,
        "nesterov": nesterov,
        "weight_decay": weight_decay,
        "grad_clip": grad_clip,
        "augment": augment,
        "holdout_fraction": holdout_fraction,
    }
    settings = {
        **(recipe.to_json() if recipe is not None else {}),
        **{k: v for k, v in given.items() if v is not None},
    }
    return train_winner(
        source,
        train_data=train_data,
        heldout_data=heldout_data,
        space=space,
        member=member,
        recipe=TrainRecipe.from_json(settings),
        seed=seed,
        device=device,
        build_options=build_options,
        checkpoint_dir=checkpoint_dir,
        restart=restart,
        export=export,
        registry=registry,
        progress=progress,
    )

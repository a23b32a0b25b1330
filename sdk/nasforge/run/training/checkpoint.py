"""A training's checkpoint: everything the next epoch depends on, in one file.

Written after every epoch (whole or not at all: :func:`nasforge.kernel.files.atomic_path`),
it holds the weights, the optimiser's state (momentum), the states of the generators that
order the batches, augment them and drive dropout, the per-epoch history and a
*fingerprint* of what was being trained (architecture, data digests, recipe, seed, network
options). A killed training started again with the same arguments loads it and continues
with the next epoch, and ends with the weights an uninterrupted run ends with; one of
another training (anything in the fingerprint differs) is refused in one line, as is a
file that is no checkpoint.

Read with ``torch.load(weights_only=True)``: a checkpoint never runs code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from nasforge.kernel.errors import NasforgeError, first_line
from nasforge.kernel.files import atomic_path

CHECKPOINT_FORMAT = "nasforge.train-checkpoint/1"


class CheckpointError(NasforgeError):
    """A checkpoint that cannot be continued: unreadable, or of another training."""


def write_checkpoint(path: str | os.PathLike[str], state: dict[str, Any]) -> None:
    """``state`` (tensors, numbers, strings, lists and dicts of them) to ``path``, atomically."""
    with atomic_path(path) as tmp:
        torch.save({"format": CHECKPOINT_FORMAT, **state}, tmp)


def read_checkpoint(path: str | os.PathLike[str], fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint at ``path`` if it is one of the training ``fingerprint`` describes."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for a foreign or damaged file
        raise CheckpointError(
            f"{path} is not a readable training checkpoint ({first_line(exc)[:160]}); "
            "delete it, or start over with --restart"
        ) from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a nasforge training checkpoint; delete it or use --restart")
    theirs = state.get("fingerprint")
    theirs = theirs if isinstance(theirs, dict) else {}
    differs = _differences(theirs, fingerprint)
    if differs:
        raise CheckpointError(
            f"{path} is the checkpoint of another training (it differs in {', '.join(differs)}): "
            "start over with --restart, or give another --checkpoint-dir"
        )
    return state


def _differences(theirs: dict[str, Any], ours: dict[str, Any], prefix: str = "") -> list[str]:
    """The settings in which two fingerprints differ, ``recipe.lr`` rather than ``recipe``."""
    out: list[str] = []
    for key in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(key), ours.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(_differences(a, b, f"{prefix}{key}."))
        else:
            out.append(f"{prefix}{key}")
    return out

"""A training's checkpoint: everything the next epoch depends on, in one file.

Written after every epoch (whole or not at all: :func:`nasforge.kernel.files.atomic_path`),
it holds the weights, the optimiser's state (momentum), the states of the generators that
order the batches, augment them and drive dropout, the per-epoch history and a
*fingerprint* of what was being trained (architecture, data digests, recipe, seed, network
options). A killed training started again with the same arguments loads it and continues
with the next epoch, and ends with the weights an uninterrupted run ends with; one of
another training (anything in the fingerprint differs) is refused in one line, as is a
file that is no checkpoint, one cut short, and one whose content does not match the checksum
it was written with (an edited epoch counter would otherwise be trusted).

Read with ``torch.load(weights_only=True)``: a checkpoint never runs code.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from pathlib import Path
from typing import Any

import torch

from nasforge.kernel.errors import NasforgeError, first_line
from nasforge.kernel.files import atomic_write_bytes

CHECKPOINT_FORMAT = "nasforge.train-checkpoint/2"
#: The key of the checkpoint's checksum: sha256 over everything else it holds.
CHECKSUM_KEY = "checksum"


class CheckpointError(NasforgeError):
    """A checkpoint that cannot be continued: unreadable, damaged or edited, or of another training."""


def write_checkpoint(path: str | os.PathLike[str], state: dict[str, Any]) -> None:
    """``state`` (tensors, numbers, strings, lists and dicts of them) to ``path``, atomically,
    with a checksum of its content. A write that fails (a full disk) is one line, and the
    checkpoint already there is kept."""
    payload = {"format": CHECKPOINT_FORMAT, **state}
    payload[CHECKSUM_KEY] = state_checksum(payload)
    buffer = io.BytesIO()  # serialised first: a full disk is then the filesystem's own error
    torch.save(payload, buffer)
    try:
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as exc:
        reason = exc.strerror or first_line(exc)
        raise CheckpointError(
            f"cannot write the checkpoint {path} ({reason}); the last one written is kept: free the "
            "space and run the same command again to continue from it"
        ) from None


def read_checkpoint(path: str | os.PathLike[str], fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint at ``path`` if it is whole (its checksum matches) and one of the
    training ``fingerprint`` describes."""
    path = Path(path)
    try:
        with warnings.catch_warnings():  # torch's warnings would precede the one line below
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - torch raises many types for a foreign or damaged file
        raise CheckpointError(
            f"{path} is not a readable training checkpoint (cut short, damaged, or a file of another "
            "kind): delete it, or start over with --restart"
        ) from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a nasforge training checkpoint; delete it or use --restart")
    if state.get(CHECKSUM_KEY) != state_checksum(state):
        raise CheckpointError(
            f"{path} does not match its checksum (edited or damaged): delete it, or start over with --restart"
        )
    theirs = state.get("fingerprint")
    theirs = theirs if isinstance(theirs, dict) else {}
    differs = _differences(theirs, fingerprint)
    if differs:
        raise CheckpointError(
            f"{path} is the checkpoint of another training (it differs in {', '.join(differs)}): "
            "start over with --restart, or give another --checkpoint-dir"
        )
    return state


def state_checksum(state: dict[str, Any]) -> str:
    """sha256 of a checkpoint's content, its checksum left out: every tensor's dtype, shape
    and bytes and every other value's JSON, in key order."""
    digest = hashlib.sha256()
    _feed(digest, {k: v for k, v in state.items() if k != CHECKSUM_KEY})
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        digest.update(f"tensor:{tensor.dtype}:{list(tensor.shape)}:".encode())
        if tensor.numel():
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value, key=str):
            digest.update(json.dumps(str(key)).encode() + b":")
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, list | tuple):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(json.dumps(value, sort_keys=True, allow_nan=True, default=repr).encode())


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

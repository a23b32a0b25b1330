"""The epoch loop: progress display and a per-epoch log, nothing else.

Searches differ in what one epoch does (two optimisers, gates, temperatures); they share
how epochs are counted, shown and recorded. ``run_epochs`` owns that part and calls back
into the strategy for the rest.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import torch
import torch.nn.functional as F
from rich.console import Console
from rich.progress import Progress
from torch import nn

from nasforge.kernel.converters import to_dict
from nasforge.kernel.one_shot import PROGRESS_COLUMNS
from nasforge.kernel.seeding import LocalRandomness
from nasforge.run.training.batches import Batch
from nasforge.run.training.clipping import clip_gradients


@attrs.frozen
class EpochLog:
    """What one epoch reported, with its wall time."""

    epoch: int
    metrics: dict[str, float] = attrs.field(converter=to_dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "metrics": dict(self.metrics), "seconds": self.seconds}


def _describe(metrics: dict[str, float], keys: int = 4) -> str:
    shown = list(metrics.items())[:keys]
    return "  ".join(f"{k}={v:.4g}" for k, v in shown)


def run_epochs(
    epochs: int,
    epoch_fn: Callable[[int], dict[str, float]],
    *,
    description: str = "training",
    progress: bool = True,
    console: Console | None = None,
    on_epoch_end: Callable[[EpochLog], None] | None = None,
) -> list[EpochLog]:
    """Call ``epoch_fn(e)`` for ``e = 0..epochs-1`` with a rich progress bar.

    ``epoch_fn`` returns the epoch's metrics (floats); ``on_epoch_end`` sees each log as
    soon as it exists, which is where a caller journals or checkpoints.
    """
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    logs: list[EpochLog] = []
    bar = Progress(*PROGRESS_COLUMNS, console=console, disable=not progress, transient=False)
    with bar:
        task = bar.add_task(description, total=epochs, info="")
        for e in range(epochs):
            start = time.perf_counter()
            metrics = {k: float(val) for k, val in epoch_fn(e).items()}
            log = EpochLog(e, metrics, time.perf_counter() - start)
            logs.append(log)
            if on_epoch_end is not None:
                on_epoch_end(log)
            bar.update(task, advance=1, info=_describe(metrics))
    return logs


def train_epoch(
    model: nn.Module,
    batches: Iterable[Batch],
    optimizer: torch.optim.Optimizer,
    *,
    grad_clip: float | None = 5.0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.cross_entropy,
    randomness: LocalRandomness | None = None,
    on_step: Callable[[float], None] | None = None,
) -> dict[str, float]:
    """One supervised epoch; returns mean loss and accuracy over the samples seen.

    ``randomness`` is entered around each forward pass, so dropout and drop-path draw from
    the caller's generators, not torch's global one; only the forward pays for it (the
    backward pass and the optimiser step draw nothing). ``on_step`` sees each batch's loss.
    """
    model.train()
    loss_sum, correct, seen = 0.0, 0.0, 0
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        with randomness if randomness is not None else contextlib.nullcontext():
            logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        clip_gradients(model.parameters(), grad_clip)
        optimizer.step()
        value = float(loss.detach())
        if on_step is not None:
            on_step(value)
        loss_sum += value * x.shape[0]
        correct += float((logits.argmax(-1) == y).sum())
        seen += x.shape[0]
    seen = max(seen, 1)
    return {"loss": loss_sum / seen, "accuracy": correct / seen}

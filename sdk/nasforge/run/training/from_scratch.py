"""Training a network from scratch on in-memory data: the one loop the short-train
evaluator, an ensemble's members and the insight probes share.

Each epoch sets the learning rate from a cosine schedule that reaches 0 at ``epochs``
(so a shorter budget is a complete short schedule, not the start of a longer one),
shuffles the batches from the caller's generator and trains one epoch
(:func:`~nasforge.run.training.loop.train_epoch`). What a caller does between epochs
(validate, record a curve, stop early) is its ``after_epoch``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from nasforge.kernel.seeding import LocalRandomness
from nasforge.run.training.batches import iterate_batches
from nasforge.run.training.loop import train_epoch
from nasforge.run.training.schedules import CosineSchedule, set_lr


def train_cosine(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    order: torch.Generator,
    randomness: LocalRandomness | None = None,
    grad_clip: float | None = 5.0,
    on_step: Callable[[float], None] | None = None,
    after_epoch: Callable[[int, dict[str, float]], bool | None] | None = None,
) -> dict[str, float]:
    """Train ``model`` for ``epochs`` epochs; the last epoch's mean loss and accuracy.

    ``order`` shuffles the batches and ``randomness`` holds the forward passes' draws
    (dropout, drop-path), both the caller's, so the same seeds train the same network.
    ``on_step`` sees every batch's loss; ``after_epoch(epochs done, log)`` returning True
    ends the training there.
    """
    schedule = CosineSchedule(lr, 0.0, epochs)
    log: dict[str, float] = {}
    for epoch in range(epochs):
        set_lr(optimizer, schedule(epoch))
        batches = iterate_batches(x, y, batch_size, generator=order)
        log = train_epoch(
            model, batches, optimizer, grad_clip=grad_clip, randomness=randomness, on_step=on_step
        )
        if after_epoch is not None and after_epoch(epoch + 1, log):
            break
    return log

"""Stage A: train the supernet on one uniformly sampled architecture per step (§5.2.1).

Only the sampled path runs and receives gradients (its one-hot edge weights need no
gradient, so the contract's forward skips every other op), which trains every candidate
equally often in the limit (Prop. B.1). SGD with momentum, cosine learning rate to 0 over
all steps, gradient clipping as the core's training loop does.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.run.training import CosineSchedule, clip_gradients, iterate_batches, set_lr
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding, Assignment

#: Called after each epoch with (epoch, mean loss, accuracy, the last path trained).
EpochCallback = Callable[[int, float, float, Assignment], None]


def train_uniform(
    supernet: nn.Module,
    encoding: ArchEncoding,
    data: TensorData,
    config: NesbsConfig,
    generator: torch.Generator,
    *,
    on_epoch: EpochCallback | None = None,
) -> list[dict[str, float]]:
    """Train ``supernet``'s weights with uniform single-path sampling; returns per-epoch logs."""
    device = torch.device(config.device)
    weights = list(supernet.weight_parameters())  # type: ignore[operator]
    opt = torch.optim.SGD(weights, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    n_batches = config.batches_per_epoch(len(data))
    epochs, steps = config.supernet_schedule(n_batches)
    schedule = CosineSchedule(config.lr, 0.0, max(1, steps))
    like = next(iter(supernet.arch_parameters())).detach()  # type: ignore[operator]
    x_all, y_all = data.x.to(device), data.y.to(device)
    logs: list[dict[str, float]] = []
    step = 0
    last: Assignment = encoding.uniform(generator)
    supernet.train()
    for epoch in range(epochs):
        loss_sum, correct, seen = 0.0, 0.0, 0
        batches = iterate_batches(x_all, y_all, config.batch_size, generator=generator)
        for b, (x, y) in enumerate(batches):
            if b >= n_batches or step >= steps:
                break
            set_lr(opt, schedule(step))
            last = encoding.uniform(generator)
            logits = supernet(x, encoding.weights_of(last, like=like))
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            clip_gradients(weights, config.grad_clip)
            opt.step()
            step += 1
            loss_sum += float(loss.detach()) * x.shape[0]
            correct += float((logits.argmax(-1) == y).sum())
            seen += x.shape[0]
        seen = max(seen, 1)
        log = {"loss": loss_sum / seen, "accuracy": correct / seen}
        logs.append(log)
        if on_epoch is not None:
            on_epoch(epoch, log["loss"], log["accuracy"], last)
    return logs

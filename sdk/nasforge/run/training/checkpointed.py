"""One network trained from scratch by a :class:`~nasforge.run.training.recipe.TrainRecipe`,
checkpointed after every epoch and continued from its checkpoint after a kill.

The weights are drawn from the seed (:class:`~nasforge.kernel.seeding.LocalRandomness`,
which then also drives dropout and drop-path), the batch order and the augmentation from
two CPU generators seeded from it; nothing touches torch's global generators. The
checkpoint (:mod:`nasforge.run.training.checkpoint`) holds those three streams with the
weights and the optimiser, so a training killed after epoch k and started again computes
epochs k+1.. exactly as the uninterrupted run did: the same final weights, bit for bit on
the CPU. (A CUDA run continues the same way, on the same kind of device; across devices
the dropout stream restarts.)

Progress: a rich bar where one is shown live on a terminal; elsewhere (a log, CI) a
record every 10 seconds (``NASFORGE_PROGRESS_SECONDS``) naming the epoch and batch, so
a long epoch still says it is alive; every finished epoch is a debug record.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import torch
from rich.console import Console
from rich.progress import Progress
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.one_shot import PROGRESS_COLUMNS
from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import LocalRandomness, seeded_generator
from nasforge.run.training.augment import mirror_images, shift_images
from nasforge.run.training.batches import Batch, iterate_batches
from nasforge.run.training.checkpoint import read_checkpoint, write_checkpoint
from nasforge.run.training.loop import train_epoch
from nasforge.run.training.optimizers import SGDConfig
from nasforge.run.training.recipe import TrainRecipe
from nasforge.run.training.schedules import CosineSchedule, set_lr

logger = logging.getLogger("nasforge.train")

CHECKPOINT = "checkpoint.pt"

#: Called after every epoch with its record (epoch, lr, loss, accuracy, seconds).
EpochHook = Callable[[dict[str, float]], None]


@attrs.frozen(eq=False)
class TrainedNetwork:
    """A network trained from scratch, in eval mode on its training device, and how."""

    model: nn.Module = attrs.field(repr=False)
    history: tuple[dict[str, float], ...]
    #: Epochs a checkpoint already held when this call began (0: trained from the start).
    resumed_from: int
    #: Training seconds over every call that contributed (a resumed run's included).
    seconds: float
    checkpoint: Path | None


def train_checkpointed(
    space: SearchSpace,
    g: Genotype,
    data: TensorData,
    recipe: TrainRecipe,
    *,
    seed: int = 0,
    device: str | torch.device = "cpu",
    build_options: dict[str, Any] | None = None,
    checkpoint_dir: str | Path | None = None,
    fingerprint: dict[str, Any] | None = None,
    progress: bool = False,
    console: Console | None = None,
    on_epoch: EpochHook | None = None,
) -> TrainedNetwork:
    """``g``'s network built with ``build_options`` and trained on ``data`` by ``recipe``.

    With ``checkpoint_dir`` the state after every epoch goes to ``checkpoint.pt`` there,
    and a checkpoint found there of the same training (``fingerprint``, which the caller
    makes from everything that decides the result, plus the recipe and seed added here)
    is continued; one of another training is refused in one line
    (:class:`~nasforge.run.training.checkpoint.CheckpointError`). A loss that is not
    finite stops the training in one line (a lower ``lr`` usually helps).
    """
    dev = resolve_device(device)
    randomness = LocalRandomness(seed)  # the weights, then dropout and drop-path
    with randomness:
        model = build_network(space, g, build_options).to(dev)
    optimizer = SGDConfig(
        lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay, nesterov=recipe.nesterov
    ).build(model.parameters())
    order = seeded_generator(seed)
    augment = seeded_generator(seed + 1)
    x, y = data.x.to(dev), data.y.to(dev)

    path = Path(checkpoint_dir) / CHECKPOINT if checkpoint_dir is not None else None
    full_fingerprint = {**(fingerprint or {}), "recipe": recipe.to_json(), "seed": int(seed)}
    history: list[dict[str, float]] = []
    start, seconds_before = 0, 0.0
    if path is not None and path.exists():
        state = read_checkpoint(path, full_fingerprint)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        order.set_state(state["generators"]["order"])
        augment.set_state(state["generators"]["augment"])
        if state.get("device_type") == dev.type:  # a CUDA stream cannot continue on the CPU
            randomness.generator(dev).set_state(state["generators"]["randomness"])
        history = [dict(record) for record in state["history"]]
        start, seconds_before = int(state["epoch"]), float(state["seconds"])
        if start < recipe.epochs:
            logger.info("continuing from %s after epoch %d of %d", path, start, recipe.epochs)
        else:
            logger.info("%s holds this training, finished (%d epochs): not trained again", path, start)

    schedule = CosineSchedule(recipe.lr, 0.0, recipe.epochs)
    rows, cols = recipe.shifts(data.input_shape)
    flips = recipe.flips(data.input_shape)
    batches_per_epoch = sum(1 for _ in _batch_starts(len(data), recipe.batch_size))
    started = time.perf_counter()
    reporter = _Reporter(recipe.epochs, batches_per_epoch, data.name, start, progress, console)

    def augmented(batches: Iterator[Batch]) -> Iterator[Batch]:
        for xb, yb in batches:
            if xb.shape[0] < 2:  # BatchNorm cannot train on one sample: only a last batch is that small
                continue
            if rows or cols:
                xb = shift_images(xb, rows, cols, generator=augment)
            if flips:
                xb = mirror_images(xb, generator=augment)
            yield xb, yb

    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    with reporter:
        for epoch in range(start, recipe.epochs):
            t0 = time.perf_counter()
            lr = schedule(epoch)
            set_lr(optimizer, lr)
            step = reporter.stepper(epoch)
            log = train_epoch(
                model,
                augmented(iterate_batches(x, y, recipe.batch_size, generator=order)),
                optimizer,
                grad_clip=recipe.grad_clip,
                randomness=randomness,
                on_step=step,
            )
            if not math.isfinite(log["loss"]):
                raise NasforgeError(
                    f"training diverged in epoch {epoch + 1} (loss {log['loss']}): try a lower --lr"
                )
            record = {
                "epoch": epoch + 1,
                "lr": lr,
                "loss": log["loss"],
                "accuracy": log["accuracy"],
                "seconds": time.perf_counter() - t0,
            }
            history.append(record)
            if path is not None:
                write_checkpoint(
                    path,
                    {
                        "fingerprint": full_fingerprint,
                        "epoch": epoch + 1,
                        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                        "optimizer": optimizer.state_dict(),
                        "generators": {
                            "order": order.get_state(),
                            "augment": augment.get_state(),
                            "randomness": randomness.generator(dev).get_state(),
                        },
                        "device_type": dev.type,
                        "history": history,
                        "seconds": seconds_before + time.perf_counter() - started,
                    },
                )
            reporter.epoch_done(record)
            if on_epoch is not None:
                on_epoch(record)
    return TrainedNetwork(
        model=model.eval(),
        history=tuple(history),
        resumed_from=start,
        seconds=seconds_before + time.perf_counter() - started,
        checkpoint=path,
    )


def _batch_starts(n: int, batch_size: int) -> Iterator[int]:
    """The first index of every batch that trains (a last batch of one sample does not)."""
    for begin in range(0, n, batch_size):
        if min(batch_size, n - begin) >= 2:
            yield begin


class _Reporter:
    """The epochs as a bar on a terminal, or as throttled log records elsewhere."""

    def __init__(
        self, epochs: int, batches: int, data: str, start: int, progress: bool, console: Console | None
    ) -> None:
        self.epochs, self.batches = epochs, batches
        self.log = ProgressLog(
            logger, f"training on {data}", epochs, unit="epoch", silent=bar_is_live(progress, console)
        )
        self.bar = Progress(*PROGRESS_COLUMNS, console=console, disable=not progress, transient=False)
        self.task = self.bar.add_task(f"training on {data}", total=epochs, completed=start, info="")
        self.last = ""
        self.done = start

    def __enter__(self) -> _Reporter:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.__exit__(*exc)
        if exc[0] is None:
            self.log.finish(self.done, self.last)

    def stepper(self, epoch: int) -> Callable[[float], None]:
        """The per-batch hook of ``epoch``: a log record when one is due."""
        count = iter(range(1, self.batches + 1))

        def step(_loss: float) -> None:
            batch = next(count, self.batches)
            detail = f"batch {batch}/{self.batches}" + (
                f" (epoch {self.done}: {self.last})" if self.last else ""
            )
            self.log.update(epoch + 1, detail)

        return step

    def epoch_done(self, record: dict[str, float]) -> None:
        self.done = int(record["epoch"])
        self.last = f"loss {record['loss']:.4f}, train accuracy {100 * record['accuracy']:.2f} %"
        logger.debug("epoch %d/%d: %s, %.1f s", self.done, self.epochs, self.last, record["seconds"])
        self.bar.update(self.task, completed=self.done, info=self.last)
        self.log.update(self.done, self.last)

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

import contextlib
import copy
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
from nasforge.kernel.errors import NasforgeError, first_line
from nasforge.kernel.files import output_directory
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
    state = _TrainingState(space, g, data, recipe, seed, resolve_device(device), build_options)
    check_fits(state.model, data, space.format(g))
    path = Path(checkpoint_dir) / CHECKPOINT if checkpoint_dir is not None else None
    fingerprint = {**(fingerprint or {}), "recipe": recipe.to_json(), "seed": int(seed)}
    if path is not None and path.exists():
        state.load(read_checkpoint(path, fingerprint))
        done = f"finished ({state.epoch} epochs): not trained again"
        more = f"continuing after epoch {state.epoch} of {recipe.epochs}"
        logger.info("%s holds this training, %s", path, more if state.epoch < recipe.epochs else done)
    resumed_from, seconds_before = state.epoch, state.seconds
    started = time.perf_counter()
    batches = sum(1 for _ in _batch_starts(len(data), recipe.batch_size))
    with (
        output_directory(path.parent) if path is not None else contextlib.nullcontext(),
        _Reporter(recipe.epochs, batches, data.name, resumed_from, progress, console) as reporter,
    ):
        while state.epoch < recipe.epochs:
            record = state.train_epoch(reporter.stepper(state.epoch))
            state.seconds = seconds_before + time.perf_counter() - started
            if path is not None:
                write_checkpoint(path, {"fingerprint": fingerprint, **state.to_checkpoint()})
            reporter.epoch_done(record)
            if on_epoch is not None:
                on_epoch(record)
    return TrainedNetwork(
        model=state.model.eval(),
        history=tuple(state.history),
        resumed_from=resumed_from,
        seconds=seconds_before + time.perf_counter() - started,
        checkpoint=path,
    )


def check_fits(model: nn.Module, data: TensorData, what: str = "the network") -> None:
    """Refuse, before the first epoch, a network that cannot train on ``data``: one that does
    not take its examples, or has fewer outputs than the data has classes (a
    ``num_classes`` option below the data's). A copy runs two examples in eval mode, so
    nothing of the training (weights, statistics, random streams) changes."""
    probe = copy.deepcopy(model).eval()
    device = next((p.device for p in probe.parameters()), torch.device("cpu"))
    try:
        with torch.no_grad():
            out = probe(data.x[:2].to(device))
    except (RuntimeError, ValueError, TypeError) as exc:
        shape = "x".join(map(str, data.input_shape))
        raise NasforgeError(
            f"{what} does not take the {shape} examples of {data.name}: {first_line(exc)}"
        ) from None
    outputs = int(out.shape[-1]) if out.ndim >= 1 else 0
    if out.ndim != 2 or outputs < data.num_classes:
        raise NasforgeError(
            f"{what} gives {outputs} outputs an example, but {data.name} has {data.num_classes} classes: "
            f"build it with num_classes={data.num_classes} (or leave the option out)"
        )


class _TrainingState:
    """Everything the next epoch depends on: weights, optimiser, the three random
    streams, and how far the training got (what a checkpoint holds)."""

    def __init__(
        self,
        space: SearchSpace,
        g: Genotype,
        data: TensorData,
        recipe: TrainRecipe,
        seed: int,
        device: torch.device,
        build_options: dict[str, Any] | None,
    ) -> None:
        self.recipe, self.device = recipe, device
        self.randomness = LocalRandomness(seed)  # the weights, then dropout and drop-path
        with self.randomness:
            self.model = build_network(space, g, build_options).to(device)
        self.optimizer = SGDConfig(
            lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay, nesterov=recipe.nesterov
        ).build(self.model.parameters())
        self.order = seeded_generator(seed)  # the batch order
        self.augment = seeded_generator(seed + 1)  # shifts and mirrors
        self.x, self.y = data.x.to(device), data.y.to(device)
        self.shifts, self.flips = recipe.shifts(data.input_shape), recipe.flips(data.input_shape)
        self.schedule = CosineSchedule(recipe.lr, 0.0, recipe.epochs)
        self.epoch, self.seconds = 0, 0.0
        self.history: list[dict[str, float]] = []

    def train_epoch(self, on_step: Callable[[float], None]) -> dict[str, float]:
        """One epoch at the schedule's learning rate; its record."""
        t0 = time.perf_counter()
        lr = self.schedule(self.epoch)
        set_lr(self.optimizer, lr)
        log = train_epoch(
            self.model,
            self._augmented(iterate_batches(self.x, self.y, self.recipe.batch_size, generator=self.order)),
            self.optimizer,
            grad_clip=self.recipe.grad_clip,
            randomness=self.randomness,
            on_step=on_step,
        )
        if not math.isfinite(log["loss"]):
            raise NasforgeError(
                f"training diverged in epoch {self.epoch + 1} (loss {log['loss']}): try a lower --lr"
            )
        self.epoch += 1
        record = {"epoch": self.epoch, "lr": lr, "loss": log["loss"], "accuracy": log["accuracy"]}
        record["seconds"] = time.perf_counter() - t0
        self.history.append(record)
        return record

    def _augmented(self, batches: Iterator[Batch]) -> Iterator[Batch]:
        rows, cols = self.shifts
        for xb, yb in batches:
            if xb.shape[0] < 2:  # BatchNorm cannot train on one sample: only a last batch is that small
                continue
            if rows or cols:
                xb = shift_images(xb, rows, cols, generator=self.augment)
            if self.flips:
                xb = mirror_images(xb, generator=self.augment)
            yield xb, yb

    def to_checkpoint(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "generators": {
                "order": self.order.get_state(),
                "augment": self.augment.get_state(),
                "randomness": self.randomness.generator(self.device).get_state(),
            },
            "device_type": self.device.type,
            "history": self.history,
            "seconds": self.seconds,
        }

    def load(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.order.set_state(state["generators"]["order"])
        self.augment.set_state(state["generators"]["augment"])
        if state.get("device_type") == self.device.type:  # a CUDA stream cannot continue on the CPU
            self.randomness.generator(self.device).set_state(state["generators"]["randomness"])
        self.history = [dict(record) for record in state["history"]]
        self.epoch, self.seconds = int(state["epoch"]), float(state["seconds"])


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

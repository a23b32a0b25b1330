"""The convergence probe: how fast a cell's network trains (§4.3.1, Figs. 4.3-4.5).

Chapter 4's answer to "why did the search choose this?" is that search judges
candidates before they converge, and wide, shallow cells converge faster. The probe
trains each genotype's network from scratch with the chapter's recipe (A.1.3, no
regularisation: SGD, momentum 0.9, weight decay 3e-4, cosine schedule, gradient clip 5)
for a few epochs, and records the training loss at every step plus the held-out loss at
every epoch. Every architecture sees the same data order and split for a seed, and its
initial weights come from that seed alone, so curves differ only by architecture.

Summaries: ``auc`` is the mean per-epoch training loss (the area under the epoch curve,
divided by the epochs: smaller means it fell faster), ``held_out_auc`` the same of the
held-out loss (what the thesis plots: test loss per epoch), ``first_epoch`` the mean
training loss of epoch 1, ``increases`` the count of epoch-to-epoch rises of the held-out
loss (the chapter's "stability"). Held-out accuracy is recorded per epoch too.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import attrs
from attrs import validators as v
from torch import nn

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.seeding import LocalRandomness, seeded_generator
from nasforge.run.training import SGDConfig, evaluate, train_cosine


@attrs.frozen
class ProbeSettings:
    """The recipe of the probe; the defaults are the chapter's (A.1.3), with few epochs."""

    epochs: int = attrs.field(default=8, validator=[v.instance_of(int), v.ge(1)])
    batch_size: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(1)])
    lr: float = attrs.field(default=0.025, converter=float, validator=v.gt(0.0))
    momentum: float = attrs.field(default=0.9, converter=float, validator=[v.ge(0.0), v.lt(1.0)])
    weight_decay: float = attrs.field(default=3e-4, converter=float, validator=v.ge(0.0))
    grad_clip: float = attrs.field(default=5.0, converter=float, validator=v.gt(0.0))
    test_fraction: float = attrs.field(default=0.2, converter=float, validator=[v.gt(0.0), v.lt(1.0)])
    limit: int | None = attrs.field(default=None, validator=v.optional([v.instance_of(int), v.ge(2)]))

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class Curve:
    """One training run: per-step and per-epoch training loss, per-epoch held-out loss and
    accuracy (``test_accuracy`` is the final one)."""

    label: str
    seed: int
    step_loss: tuple[float, ...] = attrs.field(converter=to_tuple)
    epoch_loss: tuple[float, ...] = attrs.field(converter=to_tuple)
    test_loss: tuple[float, ...] = attrs.field(converter=to_tuple)
    test_accuracy: float
    seconds: float
    test_accuracies: tuple[float, ...] = attrs.field(default=(), converter=to_tuple)

    @property
    def auc(self) -> float:
        return sum(self.epoch_loss) / len(self.epoch_loss)

    @property
    def held_out_auc(self) -> float:
        """Mean held-out loss over the epochs: smaller means it fell faster on unseen data."""
        return sum(self.test_loss) / len(self.test_loss)

    @property
    def first_epoch(self) -> float:
        return self.epoch_loss[0]

    @property
    def increases(self) -> int:
        return sum(b > a for a, b in zip(self.test_loss, self.test_loss[1:], strict=False))

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "seed": self.seed,
            "epoch_loss": list(self.epoch_loss),
            "test_loss": list(self.test_loss),
            "test_accuracies": list(self.test_accuracies),
            "test_accuracy": self.test_accuracy,
            "auc": self.auc,
            "held_out_auc": self.held_out_auc,
            "first_epoch": self.first_epoch,
            "increases": self.increases,
            "seconds": self.seconds,
        }


def split(data: TensorData, settings: ProbeSettings, seed: int) -> tuple[TensorData, TensorData]:
    """(train, test) of ``data`` for ``seed``, at most ``settings.limit`` samples in all."""
    if settings.limit is not None and settings.limit < len(data):
        data, _ = data.split(settings.limit / len(data), seed=seed)
    test, train = data.split(settings.test_fraction, seed=seed)
    if len(test) < 2 or len(train) < 1:
        raise NasforgeError(
            f"the convergence probe needs at least 2 held-out and 1 training sample; {data.name} gives "
            f"{len(test)} and {len(train)} (raise --limit or change the test fraction)"
        )
    return train, test


def train_curve(
    model: nn.Module,
    train: TensorData,
    test: TensorData,
    settings: ProbeSettings,
    *,
    seed: int,
    label: str,
    randomness: LocalRandomness | None = None,
) -> Curve:
    """Train ``model`` in place with the probe's recipe and record its losses."""
    start = time.perf_counter()
    optimiser = SGDConfig(settings.lr, settings.momentum, settings.weight_decay).build(model.parameters())
    steps: list[float] = []
    epochs: list[float] = []
    tests: list[float] = []
    accuracies: list[float] = []

    def held_out(_done: int, log: dict[str, float]) -> None:
        epochs.append(log["loss"])
        loss, accuracy = evaluate(model, test.x, test.y)
        tests.append(loss)
        accuracies.append(accuracy)

    train_cosine(
        model,
        optimiser,
        train.x,
        train.y,
        epochs=settings.epochs,
        lr=settings.lr,
        batch_size=settings.batch_size,
        order=seeded_generator(seed),
        randomness=randomness,
        grad_clip=settings.grad_clip,
        on_step=steps.append,
        after_epoch=held_out,
    )
    _, acc = evaluate(model, test.x, test.y)
    return Curve(label, seed, steps, epochs, tests, acc, time.perf_counter() - start, accuracies)


@attrs.frozen
class Summary:
    """Mean and spread over seeds of one genotype's curves."""

    label: str
    auc: float
    auc_std: float
    first_epoch: float
    final_loss: float
    test_accuracy: float
    increases: float
    held_out_auc: float = math.nan
    held_out_auc_std: float = math.nan

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    return mean, math.sqrt(sum((a - mean) ** 2 for a in values) / (n - 1)) if n > 1 else 0.0


def summarise(label: str, curves: Sequence[Curve]) -> Summary:
    n = len(curves)
    mean, std = _mean_std([c.auc for c in curves])
    held_mean, held_std = _mean_std([c.held_out_auc for c in curves])
    return Summary(
        label,
        mean,
        std,
        sum(c.first_epoch for c in curves) / n,
        sum(c.epoch_loss[-1] for c in curves) / n,
        sum(c.test_accuracy for c in curves) / n,
        sum(c.increases for c in curves) / n,
        held_mean,
        held_std,
    )

"""Per-epoch schedules as pure functions of the epoch, so a resumed run needs no state."""

from __future__ import annotations

import math

import attrs
import torch
from attrs import validators as v


@attrs.frozen
class CosineSchedule:
    """Cosine from ``start`` at epoch 0 towards ``end`` at epoch ``total`` (DARTS's lr).

    Matches ``CosineAnnealingLR(T_max=total, eta_min=end)`` stepped once per epoch.
    """

    start: float = attrs.field(converter=float, validator=v.ge(0.0))
    end: float = attrs.field(default=0.0, converter=float, validator=v.ge(0.0))
    total: int = attrs.field(default=1, validator=[v.instance_of(int), v.ge(1)])

    def __call__(self, epoch: int) -> float:
        t = min(max(epoch, 0), self.total) / self.total
        return self.end + 0.5 * (self.start - self.end) * (1.0 + math.cos(math.pi * t))


@attrs.frozen
class LinearSchedule:
    """Linear from ``start`` at epoch 0 to ``end`` at epoch ``total - 1`` (then held).

    This is the per-epoch form PR-DARTS uses for its gate temperature:
    ``start - (start - end) * e / (E - 1)``.
    """

    start: float = attrs.field(converter=float)
    end: float = attrs.field(converter=float)
    total: int = attrs.field(validator=[v.instance_of(int), v.ge(1)])

    def __call__(self, epoch: int) -> float:
        if self.total == 1:
            return self.end
        t = min(max(epoch, 0), self.total - 1) / (self.total - 1)
        return self.start + (self.end - self.start) * t


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Set every parameter group's learning rate (schedules stay outside the optimiser)."""
    for group in optimizer.param_groups:
        group["lr"] = lr

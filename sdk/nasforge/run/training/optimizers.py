"""Optimiser settings as validated values, so searches can record and rebuild them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import torch
from attrs import validators as v

from nasforge.kernel.converters import to_tuple

_nonneg = [v.instance_of(float), v.ge(0.0)]


@attrs.frozen
class SGDConfig:
    """SGD with momentum; defaults are DARTS's weight optimiser (lr 0.025, wd 3e-4)."""

    lr: float = attrs.field(default=0.025, converter=float, validator=[v.gt(0.0)])
    momentum: float = attrs.field(default=0.9, converter=float, validator=[v.ge(0.0), v.lt(1.0)])
    weight_decay: float = attrs.field(default=3e-4, converter=float, validator=_nonneg)
    nesterov: bool = attrs.field(default=False, validator=v.instance_of(bool))

    def build(self, params: Iterable[torch.nn.Parameter]) -> torch.optim.SGD:
        return torch.optim.SGD(
            list(params),
            lr=self.lr,
            momentum=self.momentum,
            weight_decay=self.weight_decay,
            nesterov=self.nesterov,
        )

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class AdamConfig:
    """Adam; defaults are DARTS's architecture optimiser (lr 3e-4, betas (0.5, 0.999), wd 1e-3)."""

    lr: float = attrs.field(default=3e-4, converter=float, validator=[v.gt(0.0)])
    betas: tuple[float, float] = attrs.field(default=(0.5, 0.999), converter=to_tuple)
    weight_decay: float = attrs.field(default=1e-3, converter=float, validator=_nonneg)

    @betas.validator
    def _check_betas(self, _attr: attrs.Attribute, value: tuple) -> None:
        if len(value) != 2 or not all(0.0 <= float(b) < 1.0 for b in value):
            raise ValueError(f"Adam betas must be two numbers in [0, 1), got {value!r}")

    def build(self, params: Iterable[torch.nn.Parameter]) -> torch.optim.Adam:
        b1, b2 = (float(b) for b in self.betas)
        return torch.optim.Adam(list(params), lr=self.lr, betas=(b1, b2), weight_decay=self.weight_decay)

    def to_json(self) -> dict[str, Any]:
        return {"lr": self.lr, "betas": list(self.betas), "weight_decay": self.weight_decay}

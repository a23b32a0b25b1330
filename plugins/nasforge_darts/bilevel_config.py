"""Settings shared by DARTS and PR-DARTS: flat, JSON-friendly, validated.

Flat fields (``w_lr`` rather than a nested optimiser object) keep them settable from the
command line as ``-o w_lr=0.05`` and recordable in a journal as plain JSON.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import validators as v

from nasforge.training import AdamConfig, SGDConfig

_pos_int = [v.instance_of(int), v.ge(1)]


def _opt_pos_int(_inst: Any, attr: attrs.Attribute, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(f"{attr.name} must be a positive int or None, got {value!r}")


@attrs.frozen(kw_only=True)
class BilevelConfig:
    """Alternating weight / architecture optimisation (DARTS's defaults)."""

    epochs: int = attrs.field(default=50, validator=_pos_int)
    batch_size: int = attrs.field(default=64, validator=_pos_int)
    train_portion: float = attrs.field(default=0.5, converter=float, validator=[v.gt(0), v.lt(1)])
    #: Supernet options passed to ``space.supernet`` (e.g. ``{"C": 8}``).
    supernet: dict[str, Any] = attrs.field(factory=dict, converter=dict)
    #: Cells of the DARTS-space supernet (ignored by other spaces).
    darts_layers: int = attrs.field(default=8, validator=[v.instance_of(int), v.ge(3)])
    w_lr: float = attrs.field(default=0.025, converter=float, validator=v.gt(0))
    w_lr_min: float = attrs.field(default=0.001, converter=float, validator=v.ge(0))
    w_momentum: float = attrs.field(default=0.9, converter=float, validator=[v.ge(0), v.lt(1)])
    w_weight_decay: float = attrs.field(default=3e-4, converter=float, validator=v.ge(0))
    w_nesterov: bool = attrs.field(default=False, validator=v.instance_of(bool))
    grad_clip: float = attrs.field(default=5.0, converter=float, validator=v.gt(0))
    arch_lr: float = attrs.field(default=3e-4, converter=float, validator=v.gt(0))
    arch_betas: tuple[float, float] = attrs.field(default=(0.5, 0.999), converter=tuple)
    arch_weight_decay: float = attrs.field(default=1e-3, converter=float, validator=v.ge(0))
    #: DARTS steps the architecture before the weights on each batch pair; GDAS-style
    #: code (PR-DARTS's) does the weights first.
    arch_first: bool = attrs.field(default=True, validator=v.instance_of(bool))
    #: Cap on batch pairs per epoch (smoke tests, quick demos); None = the whole split.
    max_batches: int | None = attrs.field(default=None, validator=_opt_pos_int)
    #: Evaluate the supernet (and the derived cell with inherited weights) every n epochs.
    eval_every: int = attrs.field(default=1, validator=_pos_int)

    def weight_optimizer(self) -> SGDConfig:
        return SGDConfig(
            lr=self.w_lr,
            momentum=self.w_momentum,
            weight_decay=self.w_weight_decay,
            nesterov=self.w_nesterov,
        )

    def arch_optimizer(self) -> AdamConfig:
        return AdamConfig(lr=self.arch_lr, betas=self.arch_betas, weight_decay=self.arch_weight_decay)

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["arch_betas"] = list(self.arch_betas)
        return out

"""Settings shared by DARTS and PR-DARTS: flat, JSON-friendly, validated.

Flat fields (``w_lr`` rather than a nested optimiser object) keep them settable from the
command line as ``-o w_lr=0.05`` and recordable in a journal as plain JSON.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.device import device_name
from nasforge.kernel.option_types import (
    MAX_COUNT,
    as_dict,
    as_float,
    as_tuple,
    in_range,
    typed,
)
from nasforge.run.training import AdamConfig, SGDConfig

_count = [typed, in_range(ge=1, le=MAX_COUNT)]


@attrs.frozen(kw_only=True)
class BilevelConfig:
    """Alternating weight / architecture optimisation (DARTS's defaults).

    Every field is checked for its type (an int is never a bool, a number is finite) and
    range, with :class:`~nasforge.kernel.errors.OptionError`, because each is settable
    from the command line and recorded in a journal a later ``resume`` reads back.
    """

    epochs: int = attrs.field(default=50, validator=_count)
    batch_size: int = attrs.field(default=64, validator=_count)
    train_portion: float = attrs.field(default=0.5, converter=as_float, validator=in_range(gt=0, lt=1))
    #: Supernet options passed to ``space.supernet`` (e.g. ``{"C": 8}``).
    supernet: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    #: Cells of the supernet, passed as ``layers`` to spaces whose supernet takes that
    #: option (the DARTS space); other spaces ignore it.
    darts_layers: int = attrs.field(default=8, validator=[typed, in_range(ge=3, le=MAX_COUNT)])
    w_lr: float = attrs.field(default=0.025, converter=as_float, validator=in_range(gt=0))
    w_lr_min: float = attrs.field(default=0.001, converter=as_float, validator=in_range(ge=0))
    w_momentum: float = attrs.field(default=0.9, converter=as_float, validator=in_range(ge=0, lt=1))
    w_weight_decay: float = attrs.field(default=3e-4, converter=as_float, validator=in_range(ge=0))
    w_nesterov: bool = attrs.field(default=False, validator=typed)
    grad_clip: float = attrs.field(default=5.0, converter=as_float, validator=in_range(gt=0))
    arch_lr: float = attrs.field(default=3e-4, converter=as_float, validator=in_range(gt=0))
    arch_betas: tuple[float, float] = attrs.field(default=(0.5, 0.999), converter=as_tuple)
    arch_weight_decay: float = attrs.field(default=1e-3, converter=as_float, validator=in_range(ge=0))
    #: DARTS steps the architecture before the weights on each batch pair; GDAS-style
    #: code (PR-DARTS's) does the weights first.
    arch_first: bool = attrs.field(default=True, validator=typed)
    #: Cap on batch pairs per epoch (smoke tests, quick demos); None = the whole split.
    max_batches: int | None = attrs.field(default=None, validator=[typed, in_range(ge=1, le=MAX_COUNT)])
    #: Evaluate the supernet (and the derived cell with inherited weights) every n epochs.
    eval_every: int = attrs.field(default=1, validator=_count)
    #: Where the supernet and every batch live: "cpu", "cuda" or "cuda:N" (whether it is
    #: available is checked when a strategy is made, so a config can be written anywhere).
    device: str = attrs.field(default="cpu", validator=[typed, device_name])

    @arch_betas.validator
    def _betas_in_range(self, attr: attrs.Attribute, value: tuple[float, float]) -> None:
        for beta in value:  # Adam's betas are in [0, 1)
            in_range(ge=0, lt=1)(self, attr, beta)

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

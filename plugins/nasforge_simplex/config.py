"""The ``simplex`` strategy's settings: flat, JSON-friendly, validated.

Flat fields (``arch_lr`` rather than an optimiser object) keep every setting reachable as
``-o arch_lr=0.3`` and recordable in a journal a resume reads back. ``arch_lr`` means the
step of the parameterisation in use (Adam's learning rate on the logits for softmax, the
mirror step eta for exponentiated gradient, the gradient step for projection); left unset
it takes each one's default, since one number cannot suit all three.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch

from nasforge.kernel.device import device_name
from nasforge.kernel.option_types import (
    MAX_COUNT,
    as_dict,
    as_float,
    as_tuple,
    config_from_options,
    in_range,
    one_of,
    typed,
)
from nasforge.run.training import AdamConfig

_count = [typed, in_range(ge=1, le=MAX_COUNT)]

PARAMETERISATIONS = ("eg", "softmax", "proj")
MODES = ("first_order", "second_order", "single_level")
LOSSES = ("cross_entropy", "squared")
WEIGHT_OPTIMIZERS = ("adam", "sgd")
#: Each parameterisation's own step when ``arch_lr`` is unset: chosen so that 20 digits epochs on
#: act-mlp move alpha visibly (eg decides most layers; softmax and proj stay softer); not tuned further.
DEFAULT_ARCH_LR = {"eg": 1.0, "softmax": 0.01, "proj": 0.05}


@attrs.frozen(kw_only=True)
class SimplexConfig:
    """Everything a simplex search needs besides its seed and data."""

    #: How alpha stays on the simplex: eg (GAEA, default), softmax (DARTS) or proj.
    parameterisation: str = attrs.field(default="eg", validator=one_of(PARAMETERISATIONS))
    #: first_order (DARTS-1st / GAEA), second_order (DARTS unrolled) or single_level.
    mode: str = attrs.field(default="first_order", validator=one_of(MODES))
    #: cross_entropy, or squared (half the squared error to one-hot or real targets:
    #: the paper's loss, under which its identity is exact).
    loss: str = attrs.field(default="cross_entropy", validator=one_of(LOSSES))
    epochs: int = attrs.field(default=20, validator=_count)
    batch_size: int = attrs.field(default=64, validator=_count)
    #: Fraction of the data the weights train on; alpha fits the rest (bilevel modes).
    train_portion: float = attrs.field(default=0.5, converter=as_float, validator=in_range(gt=0, lt=1))
    #: Cap on batch pairs per epoch (smoke tests); None = the whole split.
    max_batches: int | None = attrs.field(default=None, validator=[typed, in_range(ge=1, le=MAX_COUNT)])
    #: Options passed to ``space.supernet`` (e.g. ``{"width": 32}``); data-given sizes
    #: (num_classes, in_channels) are filled in unless named here.
    supernet: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    w_optimizer: str = attrs.field(default="adam", validator=one_of(WEIGHT_OPTIMIZERS))
    w_lr: float = attrs.field(default=3e-3, converter=as_float, validator=in_range(gt=0))
    #: Cosine-annealed to this by the last epoch.
    w_lr_min: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0))
    w_momentum: float = attrs.field(default=0.9, converter=as_float, validator=in_range(ge=0, lt=1))
    w_weight_decay: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0))
    grad_clip: float = attrs.field(default=5.0, converter=as_float, validator=in_range(gt=0))
    #: The parameterisation's step (None: :data:`DEFAULT_ARCH_LR`).
    arch_lr: float | None = attrs.field(default=None, validator=[typed, in_range(gt=0, le=1e6)])
    #: Adam's betas and weight decay for softmax logits (DARTS: (0.5, 0.999), 1e-3).
    arch_betas: tuple[float, float] = attrs.field(default=(0.5, 0.999), converter=as_tuple)
    arch_weight_decay: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0))
    #: Exponentiated gradient's floor on alpha (0: none; the log domain never underflows).
    eg_floor: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0, lt=1))
    #: Finite-difference step of the second-order Hessian-vector product: ``eps / |u|``.
    unrolled_eps: float = attrs.field(default=0.01, converter=as_float, validator=in_range(gt=0))
    #: Run the arg-max consistency diagnostic on the architecture split at the end.
    diagnose: bool = attrs.field(default=True, validator=typed)
    #: Samples of the architecture split the diagnostic and the ranking use (their cost).
    diagnostic_samples: int = attrs.field(default=512, validator=_count)
    #: Architectures ranked by alpha and by shared-weight loss at the end (0: none).
    rank_candidates: int = attrs.field(default=10, validator=[typed, in_range(ge=0, le=10_000)])
    #: Weights closer than this count as tied (arg max "ambiguous"; the paper's strict
    #: total order, its A1, meets ties and rounding).
    tie_tol: float = attrs.field(default=1e-3, converter=as_float, validator=in_range(ge=0, lt=1))
    #: Evaluate the supernet and the derived network every n epochs (and at the last).
    eval_every: int = attrs.field(default=1, validator=_count)
    #: cpu, cuda or cuda:N (availability is checked when the strategy is made).
    device: str = attrs.field(default="cpu", validator=[typed, device_name])

    @arch_betas.validator
    def _betas_in_range(self, attr: attrs.Attribute, value: tuple[float, float]) -> None:
        for beta in value:
            in_range(ge=0, lt=1)(self, attr, beta)

    @property
    def step(self) -> float:
        """The parameterisation's step: ``arch_lr`` or its default."""
        return float(self.arch_lr) if self.arch_lr is not None else DEFAULT_ARCH_LR[self.parameterisation]

    def adam(self) -> AdamConfig:
        return AdamConfig(lr=self.step, betas=self.arch_betas, weight_decay=self.arch_weight_decay)

    def build_weight_optimizer(self, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
        if self.w_optimizer == "adam":
            return torch.optim.Adam(params, lr=self.w_lr, weight_decay=self.w_weight_decay)
        return torch.optim.SGD(
            params, lr=self.w_lr, momentum=self.w_momentum, weight_decay=self.w_weight_decay
        )

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["arch_betas"] = list(self.arch_betas)
        return out


def make_config(options: dict[str, Any], base: SimplexConfig | None = None) -> SimplexConfig:
    """``base`` (default: the defaults) with ``options``; unknown or bad ones in one line."""
    return config_from_options(SimplexConfig, options, owner="simplex", base=base)

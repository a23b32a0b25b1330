"""Every setting of one NASI search, validated once at the boundary.

Defaults are the paper's DARTS-space NASI-FIX settings where the paper states them
(T = 100, b = 64, μ = 2, τ = 1, ξ = 1, N = 50 calibration samples) and the research
note's resolutions where it does not: ν₀ calibrated by eq. 40 unless given (A13), all
trainable weights in the proxy (A2), exact straight-through gradients (A9).
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.option_types import MAX_COUNT, OptionError, as_dict, as_float, as_tuple, in_range, one_of, typed

MODES = ("fix", "ada")
LABELS = ("true", "random")
INPUTS = ("true", "gaussian")
PAIRINGS = ("rank-pair", "shared-argmax-op")

_count = [typed, in_range(ge=1, le=MAX_COUNT)]


@attrs.frozen
class NasiConfig:
    """Settings of :func:`nasforge_nasi.run_nasi` and the ``nasi`` strategy.

    Each field is checked for its type (an int is never a bool, a number is finite) and
    range with :class:`~nasforge.option_types.OptionError`: all are settable with ``-o``.
    """

    #: T: Monte-Carlo samples (search steps), each one architecture and one batch.
    steps: int = attrs.field(default=100, validator=_count)
    #: b: mini-batch size of the proxy.
    batch_size: int = attrs.field(default=64, validator=_count)
    #: μ: penalty coefficient (paper: 2 in DARTS, 1 in small spaces; 0 = no constraint).
    mu: float = attrs.field(default=2.0, converter=as_float, validator=in_range(ge=0.0))
    #: "fix" (NASI-FIX, eq. 40) or "ada" (NASI-ADA, eq. 41).
    mode: str = attrs.field(default="fix", validator=one_of(MODES))
    #: ν (fix) or ν₀ (ada); None calibrates it by eq. 40 before the search.
    nu0: float | None = attrs.field(default=None, validator=[typed, in_range(gt=0.0)])
    #: N: random architectures averaged by eq. 40.
    calibration_samples: int = attrs.field(default=50, validator=_count)
    tau: float = attrs.field(default=1.0, converter=as_float, validator=in_range(gt=0.0))
    xi: float = attrs.field(default=1.0, converter=as_float, validator=in_range(gt=0.0))
    #: "random": uniform labels drawn once per example (label-agnostic, A23).
    labels: str = attrs.field(default="true", validator=one_of(LABELS))
    #: "gaussian": N(0, I) inputs and uniform labels every step (data-agnostic, A24).
    inputs: str = attrs.field(default="true", validator=one_of(INPUTS))
    loss: str = attrs.field(default="cross_entropy", validator=one_of(("cross_entropy", "mse")))
    #: GDAS-style: run only the sampled ops (faster; biased straight-through gradient, A9).
    single_path: bool = attrs.field(default=False, validator=typed)
    #: DARTS derivation: how the top-2 ops pair with the top-2 inputs of a node (A12).
    pairing: str = attrs.field(default="rank-pair", validator=one_of(PAIRINGS))
    seed: int = attrs.field(default=0, validator=typed)
    #: Options of ``space.supernet(...)``; num_classes/in_channels default to the data's.
    supernet: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    #: Input shape (C, H, W) for data-agnostic runs without a dataset.
    input_shape: tuple[int, ...] | None = attrs.field(default=None, converter=as_tuple)
    num_classes: int | None = attrs.field(default=None, validator=[typed, in_range(ge=1, le=MAX_COUNT)])
    device: str = attrs.field(default="cpu", validator=typed)

    @input_shape.validator
    def _shape(self, attr: attrs.Attribute, value: tuple[int, ...] | None) -> None:
        if value is None:
            return
        if not value:
            raise OptionError("option 'input_shape' needs at least one dimension, got []")
        for size in value:
            in_range(ge=1, le=MAX_COUNT)(self, attr, size)

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = None if self.input_shape is None else list(self.input_shape)
        return data

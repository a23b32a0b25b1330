"""Every setting of one NASI search, validated once at the boundary.

Defaults are the paper's DARTS-space NASI-FIX settings where the paper states them
(T = 100, b = 64, μ = 2, τ = 1, ξ = 1, N = 50 calibration samples) and the research
note's resolutions where it does not: ν₀ calibrated by eq. 40 unless given (A13), all
trainable weights in the proxy (A2), exact straight-through gradients (A9).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from attrs import validators as v

MODES = ("fix", "ada")
LABELS = ("true", "random")
INPUTS = ("true", "gaussian")
PAIRINGS = ("rank-pair", "shared-argmax-op")


def _positive_or_none(_inst: Any, attr: attrs.Attribute, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{attr.name} must be a positive number or None, got {value!r}")


def _shape_or_none(_inst: Any, attr: attrs.Attribute, value: tuple[int, ...] | None) -> None:
    if value is not None and (not value or any(not isinstance(d, int) or d < 1 for d in value)):
        raise ValueError(f"{attr.name} must be a tuple of positive ints, got {value!r}")


def _optional_tuple(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(d) for d in value)


@attrs.frozen
class NasiConfig:
    """Settings of :func:`nasforge_nasi.run_nasi` and the ``nasi`` strategy."""

    #: T: Monte-Carlo samples (search steps), each one architecture and one batch.
    steps: int = attrs.field(default=100, validator=[v.instance_of(int), v.ge(1)])
    #: b: mini-batch size of the proxy.
    batch_size: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(1)])
    #: μ: penalty coefficient (paper: 2 in DARTS, 1 in small spaces; 0 = no constraint).
    mu: float = attrs.field(default=2.0, converter=float, validator=v.ge(0.0))
    #: "fix" (NASI-FIX, eq. 40) or "ada" (NASI-ADA, eq. 41).
    mode: str = attrs.field(default="fix", validator=v.in_(MODES))
    #: ν (fix) or ν₀ (ada); None calibrates it by eq. 40 before the search.
    nu0: float | None = attrs.field(default=None, validator=_positive_or_none)
    #: N: random architectures averaged by eq. 40.
    calibration_samples: int = attrs.field(default=50, validator=[v.instance_of(int), v.ge(1)])
    tau: float = attrs.field(default=1.0, converter=float, validator=v.gt(0.0))
    xi: float = attrs.field(default=1.0, converter=float, validator=v.gt(0.0))
    #: "random": uniform labels drawn once per example (label-agnostic, A23).
    labels: str = attrs.field(default="true", validator=v.in_(LABELS))
    #: "gaussian": N(0, I) inputs and uniform labels every step (data-agnostic, A24).
    inputs: str = attrs.field(default="true", validator=v.in_(INPUTS))
    loss: str = attrs.field(default="cross_entropy", validator=v.in_(("cross_entropy", "mse")))
    #: GDAS-style: run only the sampled ops (faster; biased straight-through gradient, A9).
    single_path: bool = attrs.field(default=False, validator=v.instance_of(bool))
    #: DARTS derivation: how the top-2 ops pair with the top-2 inputs of a node (A12).
    pairing: str = attrs.field(default="rank-pair", validator=v.in_(PAIRINGS))
    seed: int = attrs.field(default=0, validator=v.instance_of(int))
    #: Options of ``space.supernet(...)``; num_classes/in_channels default to the data's.
    supernet: dict[str, Any] = attrs.field(factory=dict, converter=dict)
    #: Input shape (C, H, W) for data-agnostic runs without a dataset.
    input_shape: tuple[int, ...] | None = attrs.field(
        default=None, converter=_optional_tuple, validator=_shape_or_none
    )
    num_classes: int | None = attrs.field(default=None, validator=v.optional(v.ge(1)))
    device: str = attrs.field(default="cpu", validator=v.instance_of(str))

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = None if self.input_shape is None else list(self.input_shape)
        return data

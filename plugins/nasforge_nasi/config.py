"""Every setting of one NASI search, validated once at the boundary.

Defaults are the paper's DARTS-space NASI-FIX settings where the paper states them
(T = 100, b = 64, μ = 2, τ = 1, ξ = 1, N = 50 calibration samples), ν by the paper's rule
for each mode (``nu0="paper"``: FIX calibrates ν by eq. 40, App. B.1; ADA starts from the
paper's "relatively large" ν₀, see :func:`paper_nu0`), and the research note's
resolutions where the paper is silent: all trainable weights in the proxy (A2), exact
straight-through gradients (A9).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

from nasforge.kernel.option_types import (
    MAX_COUNT,
    OptionError,
    as_dict,
    as_float,
    as_tuple,
    in_range,
    one_of,
    typed,
)

MODES = ("fix", "ada")
LABELS = ("true", "random")
INPUTS = ("true", "gaussian")
PAIRINGS = ("rank-pair", "shared-argmax-op")
#: Named ν₀ rules: "paper" (the paper's rule of the mode, :func:`paper_nu0`) and
#: "eq40-mean" (eq. 40's mean proxy of N random architectures, in either mode).
NU0_RULES = ("paper", "eq40-mean")
#: The paper's NASI-ADA starting values, paired with its μ: (μ = 2, ν₀ = 500) in the
#: "large-complexity" DARTS space, (μ = 1, ν₀ = 1000) in the "small-complexity"
#: NAS-Bench-1Shot1 (Sec. 5.1-5.2, App. B.1; research note §4.4).
PAPER_ADA_NU0 = {"large": 500.0, "small": 1000.0}

_count = [typed, in_range(ge=1, le=MAX_COUNT)]


def _nu0(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is None or isinstance(value, str):
        return  # the type check (typed) has already limited strings to NU0_RULES
    if not (math.isfinite(value) and value > 0):
        raise OptionError(
            f"option '{attribute.name}' must be a positive number or one of {NU0_RULES}, got {value}"
        )


@attrs.frozen
class NasiConfig:
    """Settings of :func:`nasforge_nasi.run_nasi` and the ``nasi`` strategy.

    Each field is checked for its type (an int is never a bool, a number is finite) and
    range with :class:`~nasforge.kernel.option_types.OptionError`: all are settable with ``-o``.
    """

    #: T: Monte-Carlo samples (search steps), each one architecture and one batch.
    steps: int = attrs.field(default=100, validator=_count)
    #: b: mini-batch size of the proxy.
    batch_size: int = attrs.field(default=64, validator=_count)
    #: μ: penalty coefficient (paper: 2 in DARTS, 1 in small spaces; 0 = no constraint).
    mu: float = attrs.field(default=2.0, converter=as_float, validator=in_range(ge=0.0))
    #: "fix" (NASI-FIX, eq. 40) or "ada" (NASI-ADA, eq. 41).
    mode: str = attrs.field(default="fix", validator=one_of(MODES))
    #: ν (fix) or ν₀ (ada): a positive number, "paper" (the paper's rule for the mode,
    #: :func:`paper_nu0`) or "eq40-mean" (eq. 40 before the search, either mode; None is
    #: the old spelling of it, kept so earlier journals resume unchanged).
    nu0: float | Literal["paper", "eq40-mean"] | None = attrs.field(default="paper", validator=[typed, _nu0])
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

    def nu0_rule(self) -> tuple[float | None, str]:
        """(ν₀, how it was chosen); ν₀ None means "calibrate by eq. 40 before the search"."""
        if self.nu0 is None or self.nu0 == "eq40-mean":
            return None, "eq40-mean"
        if self.nu0 == "paper":
            return paper_nu0(self.mode, self.mu)
        return float(self.nu0), "given"

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = None if self.input_shape is None else list(self.input_shape)
        return data


def paper_nu0(mode: str, mu: float) -> tuple[float | None, str]:
    """The paper's ν for ``mode`` (App. B.1): (value or None for eq. 40, the rule's name).

    FIX: eq. 40, the mean proxy of N random architectures (the paper's definition of
    NASI-FIX's ν; its DARTS runs used a tuned ν = 100). ADA: "a relatively large ν₀", so
    the constraint is loose in the first steps and eq. 41's running mean takes over; the
    paper's two values go with its two μ (large-complexity DARTS: μ = 2, ν₀ = 500;
    small-complexity NAS-Bench-1Shot1: μ = 1, ν₀ = 1000), so μ ≤ 1 takes 1000 and larger μ
    500. The paper states neither for NAS-Bench-201; with μ = 1 (research note A15: NB201
    is a small-complexity space) this is ν₀ = 1000.
    """
    if mode == "fix":
        return None, "paper-fix: eq40-mean"
    kind = "small" if mu <= 1.0 else "large"
    return PAPER_ADA_NU0[kind], f"paper-ada: {kind}-complexity nu0 = {PAPER_ADA_NU0[kind]:g}"

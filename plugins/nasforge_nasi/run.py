"""What one NASI search produced: the architecture, α*, and the trajectory behind it.

Kept as plain numbers so it goes into a SearchOutcome's ``produced_by`` and a JSON
report unchanged, and so tests can check every step against the paper's equations.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.genotype import Genotype


@attrs.frozen
class NasiRun:
    """The derived genotype and the per-step record of Algorithm 1."""

    genotype: Genotype
    #: α* = α₀ + Δ* per logits tensor (α₀ = 0), as nested lists.
    alpha_star: tuple[list[list[float]], ...] = attrs.field(converter=to_tuple)
    #: Θ̃ of the architecture sampled at each step.
    proxies: tuple[float, ...] = attrs.field(converter=to_tuple)
    #: ν_t in force at each step.
    nus: tuple[float, ...] = attrs.field(converter=to_tuple)
    #: ‖G_t‖ at each step.
    grad_norms: tuple[float, ...] = attrs.field(converter=to_tuple)
    #: ν (fix) or ν₀ (ada), and the eq. 40 proxies it came from (empty when given).
    nu0: float
    #: How ν₀ was chosen: "given" or a rule of config.NU0_RULES ("paper" resolved by mode).
    nu0_rule: str
    calibration: tuple[float, ...] = attrs.field(converter=to_tuple)
    #: Why α* could not be used (all sampled gradients zero), else None.
    fallback: str | None
    seconds: float
    calibration_seconds: float

    @property
    def violations(self) -> int:
        """Steps whose sample broke the constraint Θ̃ < ν."""
        return sum(p > n for p, n in zip(self.proxies, self.nus, strict=True))

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["genotype"] = self.genotype.to_json()
        data["alpha_star"] = list(self.alpha_star)
        for key in ("proxies", "nus", "grad_norms", "calibration"):
            data[key] = list(data[key])
        data["violations"] = self.violations
        return data

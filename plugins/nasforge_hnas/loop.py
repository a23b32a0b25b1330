"""The HNAS loop (thesis Alg. 7.1): BO over (μ, ν), arg-min of the score over the pool.

Each step either probes the initial design (the authors' code: s on a linspace with μ
fixed, ⌊K/4⌋ ≤ 10 probes) or fits the GP to the (point, observed value) pairs and takes
the expected-improvement maximiser; the architecture is the arg-min of the score among
pool members not yet chosen, so no architecture is evaluated twice (the code does the
same; it makes the GP target history-dependent). Everything random comes
from generators seeded by (seed, step): a step is a function of the seed and the values
told so far, which is what lets an Experiment resume HNAS by replay.

The acquisition is searched on the unit square, but the GP sees the BO's own parameters,
(s, log₁₀ μ) within the plane's bounds, as the authors' optimiser (bayes_opt 1.x) fits
its GP on raw parameter values: with one isotropic length scale, log₁₀ μ's range of 4
(code) or 5 (normalised plane) against s's 1 decides how far apart two probes are.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
import torch
from attrs import validators as v

from nasforge_hnas.acquisition import ACQUISITIONS, maximise
from nasforge_hnas.gp import ExactGP, GPSettings
from nasforge_hnas.parameterisation import MuNuPlane
from nasforge_hnas.score import OBJECTIVES, PENALTIES, hnas_score


@attrs.frozen
class LoopSettings:
    """BO and score settings; defaults follow the authors' NAS-Bench-201 run."""

    steps: int = attrs.field(default=20, validator=[v.instance_of(int), v.ge(1)])
    objective: str = attrs.field(default="non-realizable", validator=v.in_(OBJECTIVES))
    penalty: str = attrs.field(default="abs", validator=v.in_(PENALTIES))
    acquisition: str = attrs.field(default="ei", validator=v.in_(ACQUISITIONS))
    xi: float = attrs.field(default=0.0, converter=float)
    #: log₁₀ μ of the initial probes (code: -2 on NB201, the middle of [-4, 0]).
    init_log10_mu: float | None = attrs.field(default=None)
    plane: MuNuPlane = attrs.field(factory=MuNuPlane)
    gp: GPSettings = attrs.field(factory=GPSettings)

    @property
    def n_init(self) -> int:
        """The code's min(⌊0.25 K⌋, 10) probes, at least one."""
        return max(1, min(int(self.steps * 0.25), 10))


@attrs.frozen
class Proposal:
    """One BO step's choice: the unit-square point, (μ, ν) and the pool member."""

    step: int
    point: tuple[float, float]
    mu: float
    nu: float
    index: int
    score: float

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


class HnasLoop:
    """Proposes pool members; observe() feeds back the value to maximise."""

    def __init__(self, settings: LoopSettings, *, seed: int = 0) -> None:
        self.settings = settings
        self.seed = seed
        self.proposals: list[Proposal] = []
        self.values: dict[int, float] = {}  # step -> observed value
        self.chosen: set[int] = set()
        self._norm: tuple[float, float, float] | None = None

    def propose(self, metric: np.ndarray, kappa: np.ndarray) -> Proposal | None:
        """The next (point, architecture); None when every pool member was chosen."""
        if self._norm is None:  # fixed by the initial pool, so later growth shifts nothing
            self._norm = self.settings.plane.normaliser(metric, kappa)
        m_div, k_div, scale = self._norm
        step = len(self.proposals)
        point = self._point(step)
        mu, nu = self.settings.plane.mu_nu(point, scale)
        scores = hnas_score(
            metric / m_div,
            kappa / k_div,
            mu=mu,
            nu=nu,
            objective=self.settings.objective,
            penalty_kind=self.settings.penalty,
        )
        if self.chosen:
            scores = scores.copy()
            scores[list(self.chosen)] = np.nan
        if np.isnan(scores).all():
            return None
        index = int(np.nanargmin(scores))
        proposal = Proposal(step, (float(point[0]), float(point[1])), mu, nu, index, float(scores[index]))
        self.proposals.append(proposal)
        self.chosen.add(index)
        return proposal

    def observe(self, step: int, value: float) -> None:
        """The value (to maximise) of step ``step``'s architecture; -inf/NaN = failed."""
        self.values[step] = float(value)

    # --- BO -----------------------------------------------------------------------------
    def _point(self, step: int) -> np.ndarray:
        s = self.settings
        if step < s.n_init:
            lo, hi = s.plane.log10_mu
            c0 = s.init_log10_mu if s.init_log10_mu is not None else 0.5 * (lo + hi)
            frac = step / (s.n_init - 1) if s.n_init > 1 else 0.5
            return np.array([frac, s.plane.unit_of_log10_mu(c0)])
        gen = torch.Generator().manual_seed(self.seed * 100_003 + step)
        fitted = self.surrogate(generator=gen)
        if fitted is None:
            return torch.rand(2, generator=gen, dtype=torch.float64).numpy()
        surrogate, best = fitted
        return maximise(surrogate, s.acquisition, dims=2, best=best, generator=gen, xi=s.xi).numpy()

    def surrogate(self, *, generator: torch.Generator | None = None) -> tuple[PlaneGP, float] | None:
        """The GP fitted to the observations so far (on the plane's (s, log₁₀ μ)) and the best
        value, or None before any finite observation. ``generator`` seeds the restarts (a
        step's own in the loop)."""
        x, y = self._training_data()
        if x is None:
            return None
        gen = generator if generator is not None else torch.Generator().manual_seed(self.seed * 100_003)
        gp = PlaneGP(ExactGP(self.settings.gp), self.settings.plane).fit(x, y, generator=gen)
        return gp, float(y.max())

    def _training_data(self) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Observed points; failures take the worst finite value, pending ones the mean
        (a "constant liar", so several asks in flight do not all land on one point)."""
        finite = [v for v in self.values.values() if math.isfinite(v)]
        if not finite:
            return None, torch.empty(0)
        worst, mean = min(finite), sum(finite) / len(finite)
        xs, ys = [], []
        for p in self.proposals:
            value = self.values.get(p.step)
            if value is None:
                value = mean
            elif not math.isfinite(value):
                value = worst
            xs.append(p.point)
            ys.append(value)
        return torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)

    def best(self) -> Proposal | None:
        """The proposal with the largest finite observed value (the HNAS answer)."""
        done = [
            (v, -p.step, p) for p in self.proposals if math.isfinite(v := self.values.get(p.step, math.nan))
        ]
        return max(done, key=lambda t: (t[0], t[1]))[2] if done else None


class PlaneGP:
    """A GP queried on the unit square but fitted on the plane's parameters (s, log₁₀ μ).

    Stationary kernels ignore the offset, so only the ranges matter: s spans 1, log₁₀ μ
    the plane's bounds (module docstring)."""

    def __init__(self, gp: ExactGP, plane: MuNuPlane) -> None:
        self.gp = gp
        lo, hi = plane.log10_mu
        self._offset = torch.tensor([0.0, lo], dtype=torch.float64)
        self._width = torch.tensor([1.0, hi - lo], dtype=torch.float64)

    def to_plane(self, unit: torch.Tensor) -> torch.Tensor:
        """Unit-square points (s, u) as (s, log₁₀ μ)."""
        return self._offset + unit.to(torch.float64) * self._width

    def fit(self, unit: torch.Tensor, y: torch.Tensor, *, generator: torch.Generator) -> PlaneGP:
        self.gp.fit(self.to_plane(unit), y, generator=generator)
        return self

    def predict(self, unit: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.gp.predict(self.to_plane(unit))

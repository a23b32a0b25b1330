"""The HNAS loop (thesis Alg. 7.1): BO over (μ, ν), arg-min of the score over the pool.

Each step either probes the initial design (the authors' code: s on a linspace with μ
fixed, ⌊K/4⌋ ≤ 10 probes) or fits the GP to the (point, observed value) pairs and takes
the expected-improvement maximiser; the architecture is the arg-min of the score among
pool members not yet chosen, so no architecture is evaluated twice (the code does the
same; it makes the GP target history-dependent, notes §5.3). Everything random comes
from generators seeded by (seed, step): a step is a function of the seed and the values
told so far, which is what lets an Experiment resume HNAS by replay.
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
        x, y = self._training_data()
        if x is None:
            return torch.rand(2, generator=gen, dtype=torch.float64).numpy()
        gp = ExactGP(s.gp).fit(x, y, generator=gen)
        best = float(y.max())
        return maximise(gp, s.acquisition, dims=2, best=best, generator=gen, xi=s.xi).numpy()

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

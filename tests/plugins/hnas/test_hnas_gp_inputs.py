"""The BO's GP sees (s, log₁₀ μ), the plane's own parameters, as the authors' optimiser does.

bayes_opt 1.x fits scikit-learn's GP (isotropic Matérn 2.5, α = 1e-6, normalize_y, 5
restarts) on raw parameter values: s in [0, 1], log₁₀ μ in [-4, 0] on NAS-Bench-201. With
one length scale, that range of 4 against s's 1 is part of the surrogate; on the unit
square (log₁₀ μ squeezed into [0, 1]) the posterior is another one.
"""

from __future__ import annotations

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern

from nasforge_hnas import HnasLoop, LoopSettings, MuNuPlane


def _loop() -> tuple[HnasLoop, np.ndarray, np.ndarray]:
    """The code's initial design (10 probes along s at log₁₀ μ = -2), each told a smooth
    value of its s: a fit with a proper length scale, whose posterior off the probe line
    depends on how far log₁₀ μ stretches."""
    rng = np.random.default_rng(1)
    m, k = rng.lognormal(3.0, 0.6, 300), rng.lognormal(4.0, 0.8, 300)
    loop = HnasLoop(LoopSettings(steps=40, plane=MuNuPlane(mode="paper", scale=40.0), init_log10_mu=-2.0))
    for _ in range(loop.settings.n_init):
        p = loop.propose(m, k)
        assert p is not None
        loop.observe(p.step, float(np.sin(3.0 * p.point[0])))
    points = np.array([p.point for p in loop.proposals])
    values = np.array([loop.values[p.step] for p in loop.proposals])
    return loop, points, values


def _sklearn(x: np.ndarray, y: np.ndarray) -> GaussianProcessRegressor:
    kernel = Matern(length_scale=1.0, length_scale_bounds=(1e-5, 1e5), nu=2.5)
    return GaussianProcessRegressor(
        kernel=kernel, alpha=1e-6, normalize_y=True, n_restarts_optimizer=5, random_state=0
    ).fit(x, y)


def test_the_surrogate_is_scikit_learns_gp_on_raw_parameters() -> None:
    loop, unit, y = _loop()
    lo, hi = loop.settings.plane.log10_mu
    raw = np.column_stack([unit[:, 0], lo + unit[:, 1] * (hi - lo)])
    fitted = loop.surrogate()
    assert fitted is not None
    gp, best = fitted
    assert best == y.max()
    query = np.random.default_rng(2).random((50, 2))
    mean, std = (t.numpy() for t in gp.predict(_as_tensor(query)))
    raw_query = np.column_stack([query[:, 0], lo + query[:, 1] * (hi - lo)])
    ref_mean, ref_std = _sklearn(raw, y).predict(raw_query, return_std=True)
    assert np.allclose(mean, ref_mean, atol=1e-3 * np.ptp(y))
    assert np.allclose(std, ref_std, atol=1e-3 * np.ptp(y))
    # and the unit-square GP is a different surrogate on these points
    unit_mean = _sklearn(unit, y).predict(query)
    assert np.abs(unit_mean - ref_mean).max() > 10 * 1e-3 * np.ptp(y)


def _as_tensor(a: np.ndarray):
    import torch

    return torch.tensor(a, dtype=torch.float64)

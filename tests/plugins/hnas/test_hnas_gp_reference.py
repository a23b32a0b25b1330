"""The torch GP against scikit-learn's GaussianProcessRegressor (the reference)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern

from nasforge_hnas import ExactGP, GPSettings


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.random((12, 2))
    y = np.sin(6 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.standard_normal(12)
    return x, y, rng.random((40, 2))


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float64)


def test_posterior_and_likelihood_match_at_fixed_hyperparameters(data) -> None:
    x, y, xq = data
    ref = GaussianProcessRegressor(
        kernel=Matern(length_scale=0.3, nu=2.5), alpha=1e-6, normalize_y=True, optimizer=None
    ).fit(x, y)
    mean, std = ref.predict(xq, return_std=True)
    gp = ExactGP().set_hyperparameters(_t(x), _t(y), length_scale=0.3)
    m, s = gp.predict(_t(xq))
    assert np.allclose(m.numpy(), mean, atol=1e-10)
    assert np.allclose(s.numpy(), std, atol=1e-10)
    assert float(gp.log_marginal_likelihood()) == pytest.approx(ref.log_marginal_likelihood_value_, abs=1e-9)


@pytest.mark.slow
def test_fitted_isotropic_gp_matches_scikit_learn(data) -> None:
    x, y, xq = data
    ref = GaussianProcessRegressor(
        kernel=Matern(nu=2.5), alpha=1e-6, normalize_y=True, n_restarts_optimizer=5, random_state=0
    ).fit(x, y)
    gp = ExactGP().fit(_t(x), _t(y))
    assert float(gp.log_marginal_likelihood()) >= ref.log_marginal_likelihood_value_ - 1e-6
    assert float(gp.length_scale[0]) == pytest.approx(ref.kernel_.length_scale, rel=1e-3)
    mean, std = ref.predict(xq, return_std=True)
    m, s = gp.predict(_t(xq))
    assert np.allclose(m.numpy(), mean, atol=1e-4) and np.allclose(s.numpy(), std, atol=1e-4)


@pytest.mark.slow
def test_ard_gp_with_amplitude_is_at_least_as_likely(data) -> None:
    x, y, _ = data
    ref = GaussianProcessRegressor(
        kernel=ConstantKernel() * Matern(length_scale=[1.0, 1.0], nu=2.5),
        alpha=1e-6,
        normalize_y=True,
        n_restarts_optimizer=5,
        random_state=0,
    )
    with pytest.warns(Warning):  # scikit-learn's optimiser runs into its bounds here
        ref.fit(x, y)
    gp = ExactGP(GPSettings(ard=True, fit_amplitude=True)).fit(_t(x), _t(y))
    assert gp.length_scale.shape == (2,)
    assert float(gp.log_marginal_likelihood()) >= ref.log_marginal_likelihood_value_ - 1e-6
    # and the reference agrees on our optimum's likelihood
    k = ConstantKernel(float(gp.amplitude)) * Matern(length_scale=gp.length_scale.numpy(), nu=2.5)
    check = GaussianProcessRegressor(kernel=k, alpha=1e-6, normalize_y=True, optimizer=None).fit(x, y)
    assert check.log_marginal_likelihood_value_ == pytest.approx(
        float(gp.log_marginal_likelihood()), abs=1e-8
    )

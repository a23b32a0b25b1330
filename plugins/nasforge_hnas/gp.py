"""A small exact Gaussian process in torch: Matérn-5/2 kernel, float64, fitted by LML.

HNAS's surrogate is a GP over the 2-D (μ, ν) plane with at most a few dozen points
(thesis §7.4; the authors used bayes_opt 1.x, i.e. scikit-learn's GP with a Matérn-2.5
kernel, alpha 1e-6, normalize_y and 5 optimiser restarts). At that size an exact
Cholesky solve is instant, so we own ~150 lines instead of pinning an old library;
correctness is tested against scikit-learn's GaussianProcessRegressor.

Hyper-parameters (length scales, optionally the amplitude) are fitted by maximising the
log marginal likelihood with L-BFGS over a sigmoid reparameterisation of their log
bounds, from the initial value plus seeded random restarts, as scikit-learn does.
"""

from __future__ import annotations

import math

import attrs
import torch
from attrs import validators as v

SQRT5 = math.sqrt(5.0)


def matern52(
    a: torch.Tensor, b: torch.Tensor, length_scale: torch.Tensor, amplitude: torch.Tensor
) -> torch.Tensor:
    """k(a, b) = σ² (1 + √5 r + 5r²/3) exp(-√5 r), r the length-scaled distance."""
    diff = (a[:, None, :] - b[None, :, :]) / length_scale
    r2 = diff.pow(2).sum(-1)
    r = torch.sqrt(r2.clamp_min(1e-30))  # keeps the gradient finite at r = 0
    r = torch.where(r2 > 0, r, torch.zeros_like(r))
    return amplitude * (1.0 + SQRT5 * r + 5.0 / 3.0 * r2) * torch.exp(-SQRT5 * r)


@attrs.frozen
class GPSettings:
    """Kernel and fitting options; defaults mirror bayes_opt's scikit-learn GP."""

    #: Separate length scale per input dimension (ARD) or one shared scale.
    ard: bool = attrs.field(default=False, validator=v.instance_of(bool))
    #: Fit the amplitude σ² too (scikit-learn: a ConstantKernel factor) or keep σ² = 1.
    fit_amplitude: bool = attrs.field(default=False, validator=v.instance_of(bool))
    #: Added to the kernel diagonal (scikit-learn's ``alpha``).
    noise: float = attrs.field(default=1e-6, converter=float, validator=v.gt(0.0))
    normalize_y: bool = attrs.field(default=True, validator=v.instance_of(bool))
    restarts: int = attrs.field(default=5, validator=[v.instance_of(int), v.ge(0)])
    log_bounds: tuple[float, float] = attrs.field(
        default=(math.log(1e-5), math.log(1e5)), converter=lambda t: (float(t[0]), float(t[1]))
    )
    max_iter: int = attrs.field(default=50, validator=[v.instance_of(int), v.ge(1)])


class ExactGP:
    """Fit with :meth:`fit`, then :meth:`predict` (differentiable in the query points)."""

    def __init__(self, settings: GPSettings | None = None) -> None:
        self.settings = settings or GPSettings()
        self.length_scale: torch.Tensor | None = None
        self.amplitude = torch.tensor(1.0, dtype=torch.float64)

    # --- likelihood -----------------------------------------------------------------
    def _prepare(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x = x.to(torch.float64)
        y = y.to(torch.float64).reshape(-1)
        self.y_mean = y.mean() if self.settings.normalize_y else torch.tensor(0.0, dtype=torch.float64)
        std = y.std(unbiased=False) if self.settings.normalize_y and y.numel() > 1 else torch.tensor(1.0)
        self.y_std = (std if float(std) > 0 else torch.tensor(1.0)).to(torch.float64)
        self.y = (y - self.y_mean) / self.y_std

    def log_marginal_likelihood(
        self, length_scale: torch.Tensor | None = None, amplitude: torch.Tensor | None = None
    ) -> torch.Tensor:
        """log p(y | X, θ) of the (normalised) targets; the current θ by default."""
        ls = self.length_scale if length_scale is None else length_scale
        amp = self.amplitude if amplitude is None else amplitude
        assert ls is not None, "fit the GP first"
        k = matern52(self.x, self.x, ls, amp)
        k = k + self.settings.noise * torch.eye(k.shape[0], dtype=k.dtype)
        chol = torch.linalg.cholesky(k)
        alpha = torch.cholesky_solve(self.y[:, None], chol)
        n = self.y.numel()
        return (
            -0.5 * (self.y[:, None] * alpha).sum()
            - torch.log(torch.diagonal(chol)).sum()
            - 0.5 * n * math.log(2 * math.pi)
        )

    # --- fitting --------------------------------------------------------------------
    def fit(self, x: torch.Tensor, y: torch.Tensor, *, generator: torch.Generator | None = None) -> ExactGP:
        """Condition on (x, y) and fit θ by LML (initial θ = 1, plus seeded restarts)."""
        self._prepare(x, y)
        dims = self.x.shape[1] if self.settings.ard else 1
        n_params = dims + (1 if self.settings.fit_amplitude else 0)
        lo, hi = self.settings.log_bounds
        starts = [torch.full((n_params,), 0.0, dtype=torch.float64)]  # log θ = 0: θ = 1
        gen = generator or torch.Generator().manual_seed(0)
        for _ in range(self.settings.restarts):
            starts.append(lo + (hi - lo) * torch.rand(n_params, generator=gen, dtype=torch.float64))
        best: tuple[float, torch.Tensor] | None = None
        for log_theta in starts:
            theta, value = self._optimise(log_theta, lo, hi)
            if math.isfinite(value) and (best is None or value > best[0]):
                best = (value, theta)
        if best is None:  # every start failed numerically: keep θ = 1
            best = (math.nan, torch.zeros(n_params, dtype=torch.float64))
        self._set(best[1], dims)
        self._factorise()
        return self

    def _optimise(self, log_theta: torch.Tensor, lo: float, hi: float) -> tuple[torch.Tensor, float]:
        """Maximise LML over log θ in [lo, hi] via log θ = lo + (hi - lo)·sigmoid(z)."""
        p = ((log_theta - lo) / (hi - lo)).clamp(1e-6, 1 - 1e-6)
        z = torch.log(p / (1 - p)).clone().requires_grad_(True)
        opt = torch.optim.LBFGS([z], max_iter=self.settings.max_iter, line_search_fn="strong_wolfe")
        dims = self.x.shape[1] if self.settings.ard else 1

        def objective() -> torch.Tensor:
            opt.zero_grad()
            theta = lo + (hi - lo) * torch.sigmoid(z)
            ls, amp = self._unpack(theta, dims)
            loss = -self.log_marginal_likelihood(ls, amp)
            loss.backward()
            return loss

        try:
            opt.step(objective)
            theta = (lo + (hi - lo) * torch.sigmoid(z)).detach()
            ls, amp = self._unpack(theta, dims)
            with torch.no_grad():
                value = float(self.log_marginal_likelihood(ls, amp))
        except (RuntimeError, torch.linalg.LinAlgError):
            return log_theta, -math.inf
        return theta, value

    def _unpack(self, log_theta: torch.Tensor, dims: int) -> tuple[torch.Tensor, torch.Tensor]:
        ls = torch.exp(log_theta[:dims])
        amp = torch.exp(log_theta[dims]) if self.settings.fit_amplitude else self.amplitude.new_tensor(1.0)
        return ls, amp

    def _set(self, log_theta: torch.Tensor, dims: int) -> None:
        ls, amp = self._unpack(log_theta, dims)
        self.length_scale, self.amplitude = ls.detach(), amp.detach()

    def set_hyperparameters(
        self, x: torch.Tensor, y: torch.Tensor, *, length_scale: torch.Tensor | float, amplitude: float = 1.0
    ) -> ExactGP:
        """Condition on (x, y) with θ given (no fitting): what the reference test compares."""
        self._prepare(x, y)
        self.length_scale = torch.as_tensor(length_scale, dtype=torch.float64).reshape(-1)
        self.amplitude = torch.tensor(float(amplitude), dtype=torch.float64)
        self._factorise()
        return self

    def _factorise(self) -> None:
        assert self.length_scale is not None
        k = matern52(self.x, self.x, self.length_scale, self.amplitude)
        k = k + self.settings.noise * torch.eye(k.shape[0], dtype=k.dtype)
        self._chol = torch.linalg.cholesky(k)
        self._alpha = torch.cholesky_solve(self.y[:, None], self._chol)

    # --- prediction -----------------------------------------------------------------
    def predict(self, xq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and standard deviation at ``xq`` (n, d), in the targets' units."""
        assert self.length_scale is not None, "fit the GP first"
        xq = xq.to(torch.float64)
        ks = matern52(xq, self.x, self.length_scale, self.amplitude)
        mean = (ks @ self._alpha).reshape(-1)
        v_ = torch.linalg.solve_triangular(self._chol, ks.T, upper=False)
        var = (self.amplitude - v_.pow(2).sum(0)).clamp_min(0.0)
        return mean * self.y_std + self.y_mean, torch.sqrt(var + 1e-300) * self.y_std

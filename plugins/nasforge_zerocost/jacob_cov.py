"""jacob_cov (Mellor et al. 2020, arXiv v1 of "NAS without training")."""

from __future__ import annotations

from typing import ClassVar

import torch

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring import INPUT_GRAD, SharedPasses, SharedPassMetric, StackedPasses

_K = 1e-5


class JacobCov(SharedPassMetric):
    """−Σ_i [log(λ_i + k) + 1/(λ_i + k)], λ the eigenvalues of the correlation matrix of
    the per-sample input Jacobians ∂(Σ_c f_c)/∂x, k = 1e-5.

    The v1 score the zero-cost paper calls jacob_cov (their 0.731 on CIFAR-10). Input
    gradients that are constant for some sample (e.g. a cell of only ``none``) give an
    undefined correlation: the score is then NaN and flagged, not a crash.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="jacob_cov",
        needs_labels=False,
        sign="nonpositive",  # each log(λ + k) + 1/(λ + k) is at least 1
        description="input-Jacobian correlation score (NASWOT v1, zero-cost)",
        version="1",
    )
    needs = frozenset({INPUT_GRAD})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        assert main.input_grad is not None
        jac = main.input_grad.reshape(main.input_grad.shape[0], -1).to(torch.float64)
        corr = torch.corrcoef(jac)
        if not torch.isfinite(corr).all():
            return float("nan")
        eig = torch.linalg.eigvalsh(0.5 * (corr + corr.T)).clamp_min(0.0)
        return float(-(torch.log(eig + _K) + 1.0 / (eig + _K)).sum())

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: the correlation matrices, eigenvalues and sums batched;
        a network whose correlation is undefined scores NaN, as alone."""
        main = passes.main(self.requirements)
        assert main.input_grad is not None
        g = main.input_grad
        jac = g.reshape(g.shape[0], g.shape[1], -1).transpose(0, 1).to(torch.float64)  # (K, batch, D)
        corr = _corrcoef(jac)
        finite = torch.isfinite(corr).flatten(1).all(1)
        eye = torch.eye(corr.shape[1], dtype=corr.dtype, device=corr.device)
        safe = torch.where(finite[:, None, None], corr, eye)
        eig = torch.linalg.eigvalsh(0.5 * (safe + safe.transpose(1, 2))).clamp_min(0.0)
        scores = -(torch.log(eig + _K) + 1.0 / (eig + _K)).sum(1)
        return torch.where(finite, scores, torch.full_like(scores, float("nan"))).tolist()


def _corrcoef(x: torch.Tensor) -> torch.Tensor:
    """``torch.corrcoef`` of each (rows, columns) matrix of a batch, as it computes it:
    covariance of the centred rows, scaled by the standard deviations, clipped to [-1, 1]."""
    centred = x - x.mean(dim=2, keepdim=True)
    cov = centred @ centred.transpose(1, 2) / (x.shape[2] - 1)
    std = torch.diagonal(cov, dim1=1, dim2=2).sqrt()
    return (cov / std[:, :, None] / std[:, None, :]).clamp(-1, 1)

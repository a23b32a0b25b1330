"""Eigen-summaries of a kernel: trace, extreme eigenvalues, condition number.

One eigendecomposition serves TE-NAS (condition number), Eigen-NAS (lambda_min) and
HNAS (trace), so they are computed together and shared.
"""

from __future__ import annotations

import math

import attrs
import torch


@attrs.frozen
class Spectrum:
    """Summary of a symmetric PSD kernel, in float64 terms.

    ``condition`` is ``inf`` when the smallest eigenvalue is not positive: a singular
    kernel has no finite condition number, and an infinite score is flagged and ranked
    worst by the scorer, which is what such an architecture deserves.
    """

    size: int
    trace: float
    lambda_min: float
    lambda_max: float
    total_sum: float

    @property
    def condition(self) -> float:
        if not (math.isfinite(self.lambda_min) and math.isfinite(self.lambda_max)):
            return math.nan
        if self.lambda_min <= 0.0:
            return math.inf
        return self.lambda_max / self.lambda_min


def spectrum(kernel: torch.Tensor) -> Spectrum:
    """Eigenvalues by ``eigvalsh`` in float64 (``symeig`` is gone from torch)."""
    if kernel.ndim != 2 or kernel.shape[0] != kernel.shape[1]:
        raise ValueError(f"kernel must be square, got shape {tuple(kernel.shape)}")
    k = kernel.detach().to(torch.float64)
    k = 0.5 * (k + k.T)
    if not torch.isfinite(k).all():
        return Spectrum(k.shape[0], math.nan, math.nan, math.nan, math.nan)
    eig = torch.linalg.eigvalsh(k.cpu())
    return Spectrum(
        size=int(k.shape[0]),
        trace=float(torch.diagonal(k).sum()),
        lambda_min=float(eig[0]),
        lambda_max=float(eig[-1]),
        total_sum=float(k.sum()),
    )

"""NASWOT (Mellor et al., ICML 2021): log-determinant of the ReLU activation-pattern kernel."""

from __future__ import annotations

from typing import ClassVar

import torch

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring import RELU_KERNEL, SharedPasses, SharedPassMetric, StackedPasses


class Naswot(SharedPassMetric):
    """log|det K_H|, K_H[i,j] = Σ_ReLUs (#units where samples i and j are both active or
    both inactive) = N_A − Hamming distance of the binary codes.

    The ICML version with binary codes, which NASI's Table 3 calls NASWOT (it cites the
    ICML paper, though the zero-cost implementations it uses offer the v1 Jacobian score,
    which is ``jacob_cov`` here). Taps ``nn.ReLU`` modules only (not ``F.relu`` calls); a
    network with none has K = 0 and scores -inf, flagged.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="naswot", needs_labels=False, description="log-det of the ReLU binary-code kernel", version="1"
    )
    needs = frozenset({RELU_KERNEL})

    def score_shared(self, passes: SharedPasses) -> float:
        main = passes.main(self.requirements)
        assert main.relu_kernel is not None
        sign, logabs = torch.linalg.slogdet(main.relu_kernel)
        return float(logabs) if float(sign) != 0.0 else float("-inf")

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack: one batched log-determinant."""
        main = passes.main(self.requirements)
        assert main.relu_kernel is not None
        sign, logabs = torch.linalg.slogdet(main.relu_kernel)
        return torch.where(sign != 0, logabs, torch.full_like(logabs, float("-inf"))).tolist()

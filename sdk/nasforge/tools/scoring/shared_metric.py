"""Metrics that read from :class:`~nasforge.tools.scoring.passes.SharedPasses`.

Subclassing :class:`SharedPassMetric` is how a metric opts into pass sharing: it states
its taps in ``needs`` and computes from the shared passes in ``score_shared``; ``score``
(the plain :class:`~nasforge.kernel.metric.Metric` API) then works alone for free.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from torch import nn

from nasforge.kernel.device import exact_float32
from nasforge.kernel.metric import Batch, Metric, MetricContext
from nasforge.tools.backends import KernelSpec
from nasforge.tools.scoring.passes import SharedPasses


class SharedPassMetric(Metric):
    """A metric computed from shared passes (see the module docstring)."""

    needs: ClassVar[frozenset[str]] = frozenset()

    @property
    def requirements(self) -> frozenset[str]:
        """Main-pass taps this instance needs (variants may override)."""
        return self.needs

    @property
    def kernel_specs(self) -> frozenset[KernelSpec]:
        """Empirical kernels this instance will ask for whole (so they can share one pass)."""
        return frozenset()

    @property
    def diagonal_specs(self) -> frozenset[KernelSpec]:
        """Kernels this instance reads only through their diagonal (a trace): served by
        per-sample gradient norms (:meth:`SharedPasses.norms`), never the kernel itself."""
        return frozenset()

    @property
    def total_specs(self) -> frozenset[KernelSpec]:
        """Kernels this instance reads only through the sum of their entries (1ᵀΘ1, the
        squared norm of the summed gradient): served as :attr:`diagonal_specs` are."""
        return frozenset()

    @property
    def variant(self) -> str:
        """Settings that change the number (cache keys and reports); "" for the default."""
        return ""

    def cache_key(self) -> str:
        return f"{self.info.name}[{self.variant}]" if self.variant else self.info.name

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        with exact_float32():  # as score_model: a score means the same on every device
            passes = SharedPasses(
                model,
                batch,
                ctx,
                needs=self.requirements,
                kernels=self.kernel_specs,
                diagonals=self.diagonal_specs,
                totals=self.total_specs,
            )
            return self.score_shared(passes)

    @abc.abstractmethod
    def score_shared(self, passes: SharedPasses) -> float:
        """The score, computed from (and adding to) the shared passes."""

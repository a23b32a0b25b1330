"""Three ways to keep a layer's architecture parameters on the simplex, behind one interface.

The paper's theorems hold for whatever simplex point a search returns, so the strategy
is agnostic to how that point is kept; the three differ in the path they take:

- :class:`SoftmaxLogits` (DARTS): unconstrained logits theta, ``alpha = softmax(theta)``,
  stepped by Adam on ``d L / d theta = alpha * (g - <alpha, g>)``;
- :class:`ExponentiatedGradient` (GAEA, Li et al. 2021): mirror descent with the entropy,
  ``alpha <- alpha * exp(-eta * g) / Z``, which stays in the interior and reaches sparse
  points faster than softmax does;
- :class:`EuclideanProjection`: ``alpha <- Pi(alpha - eta * g)``, which can set weights to
  exactly zero (then the supernet skips those ops).

Every one is stepped with ``g``, the gradient of the architecture objective with respect
to alpha itself, so the strategy computes that gradient once, the same way, whatever the
parameterisation (first order, second order or single level). Exponentiated gradient
stores ``log alpha`` in the supernet's own architecture tensors (``softmax(log alpha) =
alpha``), so the supernet's default relaxation is the searched point; projection keeps
its point apart (it has exact zeros) and writes ``log alpha`` back on :meth:`sync`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import ClassVar

import torch
from torch import nn

from nasforge.run.training import AdamConfig
from nasforge_simplex.simplex_projection import project_to_simplex

#: log of the smallest weight written back into logits (``log 0`` is -inf).
LOG_FLOOR = math.log(1e-30)


class SimplexParameterisation(abc.ABC):
    """The architecture state of a search: ``alpha()`` points, ``step(g)`` moves them."""

    name: ClassVar[str]

    def __init__(self, arch: Sequence[nn.Parameter]) -> None:
        self.arch = list(arch)

    @abc.abstractmethod
    def alpha(self) -> list[torch.Tensor]:
        """The current points (one per architecture tensor, rows on the simplex, no grad)."""

    @abc.abstractmethod
    def step(self, grads: Sequence[torch.Tensor]) -> None:
        """Move by the gradient of the architecture objective with respect to ``alpha()``."""

    def sync(self) -> None:  # noqa: B027 - most keep their state in the supernet already
        """Write the state into the supernet's architecture tensors (``softmax`` = alpha)."""


class SoftmaxLogits(SimplexParameterisation):
    """DARTS: Adam on the logits; the chain rule through softmax is applied here."""

    name: ClassVar[str] = "softmax"

    def __init__(self, arch: Sequence[nn.Parameter], *, optimizer: AdamConfig) -> None:
        super().__init__(arch)
        self.optimizer = optimizer.build(self.arch)

    def alpha(self) -> list[torch.Tensor]:
        return [torch.softmax(a.detach(), dim=-1) for a in self.arch]

    def step(self, grads: Sequence[torch.Tensor]) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        for theta, g in zip(self.arch, grads, strict=True):
            alpha = torch.softmax(theta.detach(), dim=-1)
            theta.grad = alpha * (g - (alpha * g).sum(dim=-1, keepdim=True))
        self.optimizer.step()


class ExponentiatedGradient(SimplexParameterisation):
    """GAEA: ``alpha <- alpha * exp(-eta * g)``, renormalised; ``floor`` guards underflow
    (weights are clamped to it, then renormalised: each stays above ``floor / (1 + h floor)``).

    Held as ``log alpha`` in the supernet's tensors: the multiplicative update is then a
    subtraction and the renormalisation a log-sum-exp, which never underflows.
    """

    name: ClassVar[str] = "eg"

    def __init__(self, arch: Sequence[nn.Parameter], *, lr: float, floor: float = 0.0) -> None:
        super().__init__(arch)
        self.lr = float(lr)
        self.floor = float(floor)
        with torch.no_grad():  # start from the supernet's own relaxation, as a point
            for theta in self.arch:
                theta.copy_(torch.log_softmax(theta, dim=-1))

    def alpha(self) -> list[torch.Tensor]:
        return [torch.softmax(a.detach(), dim=-1) for a in self.arch]

    def step(self, grads: Sequence[torch.Tensor]) -> None:
        with torch.no_grad():
            for theta, g in zip(self.arch, grads, strict=True):
                theta.sub_(self.lr * g)
                theta.copy_(torch.log_softmax(theta, dim=-1))
                if self.floor > 0:
                    alpha = torch.softmax(theta, dim=-1).clamp_min(self.floor)
                    theta.copy_(torch.log(alpha / alpha.sum(dim=-1, keepdim=True)))


class EuclideanProjection(SimplexParameterisation):
    """Projected gradient: ``alpha <- Pi(alpha - eta * g)``; exact zeros are kept."""

    name: ClassVar[str] = "proj"

    def __init__(self, arch: Sequence[nn.Parameter], *, lr: float) -> None:
        super().__init__(arch)
        self.lr = float(lr)
        self.points = [torch.softmax(a.detach(), dim=-1).clone() for a in self.arch]

    def alpha(self) -> list[torch.Tensor]:
        return [p.clone() for p in self.points]

    def step(self, grads: Sequence[torch.Tensor]) -> None:
        self.points = [project_to_simplex(p - self.lr * g) for p, g in zip(self.points, grads, strict=True)]
        self.sync()

    def sync(self) -> None:
        with torch.no_grad():
            for theta, p in zip(self.arch, self.points, strict=True):
                theta.copy_(torch.log(p).clamp_min(LOG_FLOOR))


def make_parameterisation(
    kind: str, arch: Sequence[nn.Parameter], *, lr: float, adam: AdamConfig, floor: float
) -> SimplexParameterisation:
    """The parameterisation named ``kind`` over the supernet's architecture tensors."""
    if kind == SoftmaxLogits.name:
        return SoftmaxLogits(arch, optimizer=adam)
    if kind == ExponentiatedGradient.name:
        return ExponentiatedGradient(arch, lr=lr, floor=floor)
    if kind == EuclideanProjection.name:
        return EuclideanProjection(arch, lr=lr)
    raise ValueError(f"unknown simplex parameterisation {kind!r}; choose softmax, eg or proj")

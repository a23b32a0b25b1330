"""The ``act-mlp`` networks: input adapter, hidden layers, linear head.

The stand-alone network and the supernet are this one module, the supernet's with mixed
activations, so both name their parameters alike (``adapter``, ``linears.<l>``, ``head``).

The adapter is why one space serves images and vectors without a per-dataset option:
image batches ``(N, C, H, W)`` are average-pooled to ``pool x pool`` (an identity for
digits' 8x8 images at the default ``pool=8``) and flattened; flat batches
``(N, D)`` need ``in_features=D``, and with ``in_features`` given an image batch is
flattened as it is (MNIST-1D's 1x1x40 sequences: ``in_features=40`` keeps all 40 values),
as the ``mlp-res`` space does.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.errors import OptionError

#: Largest width or pooled size accepted: beyond it a typo, not a network.
MAX_SIZE = 1 << 16


class InputAdapter(nn.Module):
    """Images pooled to ``pool x pool`` (``pool`` None: not pooled) and flattened; vectors
    passed through."""

    def __init__(self, pool: int | None) -> None:
        super().__init__()
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (
            x.dim() == 4 and self.pool is not None
        ):  # an identity for pool x pool images (no shape test: exports trace it)
            x = F.adaptive_avg_pool2d(x, self.pool)
        return x.flatten(1)


def check_sizes(*, width: int, num_classes: int, in_channels: int, in_features: int | None, pool: int) -> int:
    """The number of input features, or an OptionError naming the bad size."""
    for name, value in (
        ("width", width),
        ("num_classes", num_classes),
        ("in_channels", in_channels),
        ("pool", pool),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise OptionError(f"option '{name}' must be an integer in [1, {MAX_SIZE}], got {value!r}")
    if in_features is None:
        return in_channels * pool * pool
    if (
        isinstance(in_features, bool)
        or not isinstance(in_features, int)
        or not 1 <= in_features <= MAX_SIZE**2
    ):
        raise OptionError(f"option 'in_features' must be a positive integer, got {in_features!r}")
    return in_features


class ActMlp(nn.Module):
    """Adapter, linear maps each followed by its activation, linear head: the network of a
    genotype (``acts`` its chosen activations) or, with mixed activations, the supernet's."""

    def __init__(
        self, adapter: nn.Module, linears: Sequence[nn.Module], acts: Sequence[nn.Module], head: nn.Module
    ) -> None:
        super().__init__()
        self.adapter = adapter
        self.linears = nn.ModuleList(linears)
        self.acts = nn.ModuleList(acts)
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.adapter(x)
        for linear, act in zip(self.linears, self.acts, strict=True):
            h = act(linear(h))
        return self.head(h)

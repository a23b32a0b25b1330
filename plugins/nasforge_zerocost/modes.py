"""Temporarily changing module modes without losing per-module state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from nasforge.tools.backends import forwards_replaced

if TYPE_CHECKING:
    import torch


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[None]:
    """Eval mode inside, each submodule's own training flag restored on exit."""
    saved = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for m, training in saved:
            m.training = training


@contextmanager
def train_mode(model: nn.Module) -> Iterator[None]:
    """Train mode inside, each submodule's own training flag restored on exit."""
    saved = [(m, m.training) for m in model.modules()]
    model.train()
    try:
        yield
    finally:
        for m, training in saved:
            m.training = training


def in_train_mode(model: nn.Module) -> bool:
    """Whether every submodule is in train mode."""
    return all(m.training for m in model.modules())


def _identity(x: torch.Tensor, *_: object, **__: object) -> torch.Tensor:
    return x


@contextmanager
def batch_norm_removed(model: nn.Module) -> Iterator[None]:
    """BatchNorm layers act as the identity inside (synflow's "BN removed").

    Done by shadowing ``forward`` on the instances, so no copy of the network is needed
    and the original methods come back on exit.
    """
    with forwards_replaced({m: _identity for m in model.modules() if isinstance(m, _BatchNorm)}):
        yield

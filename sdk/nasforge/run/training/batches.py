"""Mini-batches over in-memory tensors, reproducible from a seed.

DARTS-style searches step the weights on a training batch and the architecture on a
validation batch in lock-step; :func:`paired_batches` yields those pairs.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

Batch = tuple[torch.Tensor, torch.Tensor]


def iterate_batches(
    x: torch.Tensor,
    y: torch.Tensor,
    batch_size: int,
    *,
    generator: torch.Generator | None = None,
    shuffle: bool = True,
    drop_last: bool = False,
) -> Iterator[Batch]:
    """One pass over ``(x, y)`` in batches; shuffled by ``generator`` when given."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = x.shape[0]
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start : start + batch_size]
        yield x[idx], y[idx]


def paired_batches(
    train: Batch,
    val: Batch,
    batch_size: int,
    *,
    generator: torch.Generator | None = None,
) -> Iterator[tuple[Batch, Batch]]:
    """(train batch, val batch) pairs for one epoch of the training split.

    The validation split is cycled (reshuffled each time round) when it is smaller, so
    every training batch has a partner, as DARTS's paired loaders do.
    """
    val_iter = iterate_batches(*val, batch_size, generator=generator)
    for tb in iterate_batches(*train, batch_size, generator=generator):
        vb = next(val_iter, None)
        if vb is None:
            val_iter = iterate_batches(*val, batch_size, generator=generator)
            vb = next(val_iter)
        yield tb, vb

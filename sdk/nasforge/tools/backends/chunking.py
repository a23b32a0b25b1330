"""Run work over a batch in chunks, halving the chunk on out-of-memory and retrying.

Per-sample Jacobians cost (chunk x parameters) memory; the right chunk depends on the
device and the network, so instead of asking users to tune it we start from the
configured size and split on the first out-of-memory error (the zero-cost-nas
``find_measures`` trick, applied to every torch.func backend).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")


def is_out_of_memory(exc: BaseException) -> bool:
    """True for CUDA/MPS/CPU allocator failures, whatever class the backend raised."""
    oom_type = getattr(torch, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    return isinstance(exc, RuntimeError | MemoryError) and "out of memory" in str(exc).lower()


def _release_cached_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def map_chunks(
    fn: Callable[[int, int], T],
    n: int,
    chunk_size: int,
    *,
    min_chunk: int = 1,
) -> list[T]:
    """``[fn(start, stop) for consecutive chunks of range(n)]`` with split-and-retry.

    A chunk that runs out of memory is retried at half the size, down to ``min_chunk``;
    the smaller size is kept for the remaining chunks so the retry happens once.
    """
    if n < 0 or chunk_size < 1 or min_chunk < 1:
        raise ValueError(f"bad chunking: n={n}, chunk_size={chunk_size}, min_chunk={min_chunk}")
    out: list[T] = []
    start, size = 0, chunk_size
    while start < n:
        stop = min(n, start + size)
        try:
            out.append(fn(start, stop))
        except (RuntimeError, MemoryError) as exc:
            if not is_out_of_memory(exc) or stop - start <= min_chunk:
                raise
            _release_cached_memory()
            size = max(min_chunk, (stop - start) // 2)
            continue
        start = stop
    return out


def retry_on_oom(fn: Callable[[int], T], chunk_size: int, *, min_chunk: int = 1) -> T:
    """``fn(chunk_size)``, halving ``chunk_size`` on out-of-memory until it fits.

    For work whose chunking happens inside torch.func (``jacrev(chunk_size=...)``).
    """
    size = chunk_size
    while True:
        try:
            return fn(size)
        except (RuntimeError, MemoryError) as exc:
            if not is_out_of_memory(exc) or size <= min_chunk:
                raise
            _release_cached_memory()
            size = max(min_chunk, size // 2)

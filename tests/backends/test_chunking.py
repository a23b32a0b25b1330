from __future__ import annotations

import pytest
import torch
from backend_nets import small_batch, small_cnn

from nasforge.tools.backends import is_out_of_memory, map_chunks, per_sample_grads, retry_on_oom


class FakeDevice:
    """Raises an allocator-style error whenever a chunk is larger than ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sizes: list[int] = []

    def __call__(self, a: int, b: int) -> list[int]:
        self.sizes.append(b - a)
        if b - a > self.limit:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return list(range(a, b))


def test_split_and_retry_covers_every_index_once() -> None:
    dev = FakeDevice(limit=3)
    out = map_chunks(dev, 10, 16)
    assert [i for part in out for i in part] == list(range(10))
    assert dev.sizes[:3] == [10, 5, 2]  # 16 clipped to 10, then halved until it fits
    assert max(len(p) for p in out) <= 3


def test_other_errors_are_not_swallowed() -> None:
    def boom(a: int, b: int) -> None:
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        map_chunks(boom, 4, 2)


def test_gives_up_at_minimum_chunk() -> None:
    with pytest.raises(RuntimeError, match="out of memory"):
        map_chunks(FakeDevice(limit=0), 4, 4)


def test_retry_on_oom_halves() -> None:
    seen: list[int] = []

    def work(size: int) -> int:
        seen.append(size)
        if size > 5:
            raise torch.OutOfMemoryError("out of memory")
        return size

    assert retry_on_oom(work, 32) == 4
    assert seen == [32, 16, 8, 4]


def test_is_out_of_memory() -> None:
    assert is_out_of_memory(torch.OutOfMemoryError("x"))
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    assert not is_out_of_memory(ValueError("out of memory"))


@pytest.mark.slow
def test_per_sample_grads_match_single_sample_backward() -> None:
    model = small_cnn(bn=False)
    x, y = small_batch(n=4)
    grads = per_sample_grads(model, x, y, chunk_size=3)
    for i in range(4):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for name, p in model.named_parameters():
            torch.testing.assert_close(grads[name][i], p.grad, rtol=1e-5, atol=1e-7)

"""Fixed buffers in shared memory that builder processes fill and the scorer reads.

A network built in a worker process reaches the scorer without being pickled: the scorer
owns a few equal slots in one shared-memory file (``/dev/shm`` where there is one), hands
each build task a free slot, and the worker writes the packed network there and answers
with the slot's number. The number of slots bounds how far building runs ahead of
scoring (the prefetch queue), and their memory is registered with CUDA once (page-locked),
so a slot goes to the GPU in one direct copy. Workers map the file by its path, once per
process (:func:`attach`), whether they were forked or spawned.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import uuid

import attrs
import torch


@attrs.frozen
class SlotSpec:
    """What a worker needs to map a ring: picklable, a few bytes."""

    path: str
    count: int
    nbytes: int


def _directory() -> str:
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else tempfile.gettempdir()


_MAPPED: dict[str, torch.Tensor] = {}
_LOCK = threading.Lock()


def attach(spec: SlotSpec) -> torch.Tensor:
    """The ring's slots as a (count, nbytes) uint8 tensor in this process (mapped once;
    the mapping of an earlier ring is dropped, so a long-lived worker holds one)."""
    with _LOCK:
        memory = _MAPPED.get(spec.path)
        if memory is None:
            _MAPPED.clear()
            flat = torch.from_file(spec.path, shared=True, size=spec.count * spec.nbytes, dtype=torch.uint8)
            memory = _MAPPED[spec.path] = flat.view(spec.count, spec.nbytes)
        return memory


class SlotRing:
    """``count`` slots of ``nbytes`` each in one shared-memory file, removed on :meth:`close`."""

    def __init__(self, count: int, nbytes: int) -> None:
        if count < 1 or nbytes < 1:
            raise ValueError(f"a ring needs slots of some size, got {count} x {nbytes} bytes")
        nbytes = (nbytes + 4095) // 4096 * 4096
        path = os.path.join(_directory(), f"nasforge-sweep-{os.getpid()}-{uuid.uuid4().hex[:12]}")
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, count * nbytes)
        finally:
            os.close(fd)
        self.spec = SlotSpec(path, count, nbytes)
        self.memory = attach(self.spec)
        self.pinned = False

    @property
    def nbytes(self) -> int:
        return self.spec.nbytes

    def slot(self, index: int) -> torch.Tensor:
        return self.memory[index]

    def pin(self) -> bool:
        """Page-lock the ring for CUDA (direct copies, asynchronous ones possible); False
        where that is not possible here (the copies then go through the driver's staging)."""
        if self.pinned or not torch.cuda.is_available():
            return self.pinned
        try:  # as torch.cuda._pin_memory_utils registers memory (flag 1: portable)
            code = torch.cuda.cudart().cudaHostRegister(self.memory.data_ptr(), self.memory.numel(), 1)
            self.pinned = int(code) == 0
        except (RuntimeError, AttributeError, TypeError, AssertionError):
            self.pinned = False
        return self.pinned

    def close(self) -> None:
        """Unregister and remove the file (mappings still held elsewhere stay valid)."""
        if self.pinned:
            with contextlib.suppress(RuntimeError, AttributeError, TypeError, AssertionError):
                torch.cuda.cudart().cudaHostUnregister(self.memory.data_ptr())
            self.pinned = False
        with _LOCK:
            _MAPPED.pop(self.spec.path, None)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.spec.path)

    def __enter__(self) -> SlotRing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SlotRing", "SlotSpec", "attach"]

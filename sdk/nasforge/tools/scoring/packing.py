"""One network's parameters and buffers in one flat byte buffer, and back as views.

Moving a network to a GPU with ``model.to(device)`` is one host-to-device copy per tensor
(about 130 for a NAS-Bench-201 network, ~8 ms of a sweep's time per network on an H200
machine). A sweep's networks are instead packed where they are built, every tensor's bytes
side by side in one buffer (:func:`pack_into`), moved with one copy, and the scorer's
network of the same structure gets its tensors re-pointed at views of the moved buffer
(:func:`load_views`): bytes copied, so bit-identical weights.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import torch
from torch import nn

#: Byte alignment of each tensor in a packed buffer (any dtype's, and a cache line).
ALIGN = 64


@attrs.frozen
class PackedTensor:
    """Where one of a network's tensors sits in its packed buffer."""

    module: str  # the owning module's path ("" for the root)
    name: str  # the attribute on that module
    buffer: bool  # a buffer (else a parameter)
    dtype: str
    shape: tuple[int, ...]
    offset: int  # bytes from the buffer's start
    requires_grad: bool = True


@attrs.frozen
class Packing:
    """The layout of one packed network: its tensors and the bytes they take."""

    tensors: tuple[PackedTensor, ...]
    nbytes: int


def _tensors(network: nn.Module) -> Iterator[tuple[str, str, bool, torch.Tensor]]:
    """Every parameter, then every buffer (so the buffers are one region of the packing)."""
    modules = list(network.named_modules())
    for path, m in modules:
        for name, p in m._parameters.items():
            if p is not None:
                yield path, name, False, p
    for path, m in modules:
        for name, b in m._buffers.items():
            if b is not None:
                yield path, name, True, b


def packing_of(network: nn.Module) -> Packing:
    """The layout :func:`pack_into` writes ``network`` in (tensors in module order)."""
    out: list[PackedTensor] = []
    offset = 0
    for path, name, buffer, t in _tensors(network):
        out.append(
            PackedTensor(
                path,
                name,
                buffer,
                str(t.dtype).removeprefix("torch."),
                tuple(t.shape),
                offset,
                bool(getattr(t, "requires_grad", False)),
            )
        )
        offset += (t.numel() * t.element_size() + ALIGN - 1) // ALIGN * ALIGN
    return Packing(tuple(out), offset)


def alias(arena: torch.Tensor, offset: int, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """A tensor of ``dtype`` and ``shape`` over ``arena``'s bytes from ``offset`` on: the same
    memory, but not a view in autograd's sense, so it has a version counter of its own.

    Views of one buffer share one counter: a forward that updates one tensor in place
    (BatchNorm's running statistics and ``num_batches_tracked``) would bump every other
    tensor's version, and autograd would refuse the backward of any weight saved before.
    """
    t = torch.empty(0, dtype=dtype, device=arena.device)
    start = arena.storage_offset() + offset
    if start % t.element_size():
        raise ValueError(f"offset {offset} is not aligned for {dtype}")
    return t.set_(arena.untyped_storage(), start // t.element_size(), torch.Size(shape))  # type: ignore[call-overload]  # stubs want a stride; contiguous is the default


def _view(arena: torch.Tensor, t: PackedTensor) -> torch.Tensor:
    return alias(arena, t.offset, getattr(torch, t.dtype), t.shape)


def pack_into(network: nn.Module, arena: torch.Tensor) -> Packing:
    """Copy every parameter and buffer of ``network`` into ``arena`` (flat uint8, at least
    the packing's ``nbytes``); the layout written. Raises ValueError where it does not fit."""
    packing = packing_of(network)
    if packing.nbytes > arena.numel():
        raise ValueError(f"a network of {packing.nbytes} bytes does not fit a buffer of {arena.numel()}")
    with torch.no_grad():
        for entry, (_, _, _, t) in zip(packing.tensors, _tensors(network), strict=True):
            _view(arena, entry).copy_(t)
    return packing


def load_views(network: nn.Module, packing: Packing, arena: torch.Tensor) -> nn.Module:
    """``network`` (the same structure as the packed one) with every tensor of ``packing``
    re-pointed at its place in ``arena`` (wherever the arena lives; see :func:`alias`):
    fresh parameters, trainable as packed, without gradients. Returns ``network``."""
    modules = dict(network.named_modules())
    for entry in packing.tensors:
        m = modules[entry.module]
        t = _view(arena, entry)
        if entry.buffer:
            m._buffers[entry.name] = t
        else:
            m._parameters[entry.name] = nn.Parameter(t, requires_grad=entry.requires_grad)
    return network


__all__ = ["ALIGN", "PackedTensor", "Packing", "alias", "load_views", "pack_into", "packing_of"]

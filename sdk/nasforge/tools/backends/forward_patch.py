"""Modules' forwards replaced for the length of a block, restored exactly after.

The per-sample norms and the convolution pooling backward both swap the forward of some
modules of a network they were handed; the swap goes through here so that the restore
(including a forward the caller had set on the instance itself) is written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from torch import nn


@contextmanager
def forwards_replaced(replacements: Mapping[nn.Module, Callable[..., Any]]) -> Iterator[None]:
    """Each module's ``forward`` is its replacement inside the block (an instance
    attribute, shadowing the class's method); on exit the instance is as it was, an
    instance-level forward it already had included, whatever the block raised."""
    saved: list[tuple[nn.Module, Any]] = []
    try:
        for module, forward in replacements.items():
            saved.append((module, module.__dict__.get("forward")))
            module.forward = forward
        yield
    finally:
        for module, previous in reversed(saved):
            del module.forward
            if previous is not None:
                module.forward = previous

"""Networks for sweeps that build thousands of them: one genotype after another, fast.

A metric sweep builds a network, scores it and throws it away, for every genotype. On
NAS-Bench-201 the building (Python module construction plus weight init) cost as much as
scoring synflow. A space may therefore offer a :class:`NetworkFactory` through
``SearchSpace.network_factory(**options)`` that reuses its modules from one genotype to
the next and only re-draws the weights. The contract every factory keeps:

* ``factory.build(g, seed)`` equals ``seeded_build(lambda: space.build(g, **options),
  seed)``: the same module tree, the same parameters and buffers bit for bit, in train
  mode, with no gradients; so a sweep's scores do not depend on which one built them;
* the network it returns may be the one the next ``build`` call returns, changed: use it
  before building the next, and never keep it;
* nothing touches torch's global random generator.

:class:`SeededNetworkFactory` is the fallback for spaces without a faster one;
``nasforge.kernel.search_space.network_factory(space, options)`` picks.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.seeding import seeded_build


@runtime_checkable
class NetworkFactory(Protocol):
    """Builds the stand-alone network of one genotype at a time (see the module doc)."""

    def build(self, g: Genotype, seed: int) -> nn.Module:
        """The network of ``g`` initialised from ``seed``; valid until the next call."""
        ...


class SeededNetworkFactory:
    """A fresh ``space.build(g, **options)`` per call, its weights drawn from ``seed``."""

    def __init__(self, space: Any, options: dict[str, Any] | None = None) -> None:
        self.space = space
        self.options = dict(options or {})

    def build(self, g: Genotype, seed: int) -> nn.Module:
        from nasforge.kernel.search_space import build_network  # the space module imports this one

        return seeded_build(lambda: build_network(self.space, g, self.options), seed).train()


__all__ = ["NetworkFactory", "SeededNetworkFactory"]

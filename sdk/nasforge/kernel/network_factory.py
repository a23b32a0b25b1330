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
:func:`network_factory` picks; :func:`build_network` is the one way to build with a user's
options (their mistakes in one line).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from nasforge.kernel.errors import BuildOptionError, NasforgeError, first_line
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import NetworkFactory, SearchSpace
from nasforge.kernel.seeding import seeded_build


class SeededNetworkFactory:
    """A fresh ``space.build(g, **options)`` per call, its weights drawn from ``seed``."""

    def __init__(self, space: Any, options: dict[str, Any] | None = None) -> None:
        self.space = space
        self.options = dict(options or {})

    def build(self, g: Genotype, seed: int) -> nn.Module:
        return seeded_build(lambda: build_network(self.space, g, self.options), seed).train()


def build_network(space: SearchSpace, g: Genotype, options: dict[str, object] | None = None) -> nn.Module:
    """``space.build(g, **options)``, where options the space rejects (unknown names, wrong
    types, sizes no network can have) are the user's error, in one line, not a traceback."""
    try:
        return space.build(g, **(options or {}))
    except NasforgeError:
        raise
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise _options_error(space, options, exc) from exc


def network_factory(space: SearchSpace, options: dict[str, object] | None = None) -> NetworkFactory:
    """The space's own :class:`~nasforge.kernel.network_factory.NetworkFactory` for ``options``
    where it offers one, else a seeded rebuild per genotype; bad options as in
    :func:`build_network`."""
    make = getattr(space, "network_factory", None)
    try:
        factory = make(**(options or {})) if callable(make) else None
    except NasforgeError:
        raise
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise _options_error(space, options, exc) from exc
    return factory if factory is not None else SeededNetworkFactory(space, options)


def _options_error(space: SearchSpace, options: dict[str, object] | None, exc: Exception) -> BuildOptionError:
    return BuildOptionError(
        f"cannot build the {space.name} network with options {options or {}}: {first_line(exc)}"
    )


__all__ = ["NetworkFactory", "SeededNetworkFactory", "build_network", "network_factory"]

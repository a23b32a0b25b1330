"""The SearchSpace interface.

A space owns the meaning of a :class:`~nasforge.kernel.genotype.Genotype`: how to sample, mutate,
encode, validate and build it. What a space can do is declared in ``capabilities`` so
that a strategy refuses an unsuitable space before any work starts, with a message that
names what is missing (Archai's capability mixins, as one set of names).
"""

from __future__ import annotations

import abc
import random
from collections.abc import Iterator, Sequence
from typing import ClassVar

import torch
from torch import nn

from nasforge.kernel.errors import (
    BuildOptionError,
    CapabilityError,
    InvalidGenotypeError,
    NasforgeError,
    first_line,
)
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_factory import NetworkFactory, SeededNetworkFactory

# Capability names a space may declare; strategies list the ones they need.
SAMPLE = "sample"
MUTATE = "mutate"
NEIGHBOURS = "neighbours"
ENCODE = "encode"
ENUMERATE = "enumerate"
BUILD = "build"
SUPERNET = "supernet"


class SearchSpace(abc.ABC):
    """A set of architectures plus the operations search strategies need on it."""

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset({SAMPLE, MUTATE})
    #: Every operation name a genotype of this space may contain (exported as metadata).
    op_names: ClassVar[tuple[str, ...]] = ()
    #: Keyword options :meth:`supernet` takes, declared by spaces whose ``supernet`` takes
    #: ``**cfg``; None reads them from its signature (see ``nasforge.supernet_option_names``).
    supernet_options: ClassVar[frozenset[str] | None] = None

    # --- identity -------------------------------------------------------------------
    def genotype(self, choices: Sequence[str | int]) -> Genotype:
        """Make (and validate) a genotype of this space from its choices."""
        g = Genotype(space=self.name, version=self.version, choices=tuple(choices))
        self.validate(g)
        return g

    def validate(self, g: Genotype) -> None:
        """Raise :class:`InvalidGenotypeError` unless ``g`` belongs to this space."""
        if g.space != self.name:
            raise InvalidGenotypeError(f"genotype is from space '{g.space}', not '{self.name}'")
        if g.version != self.version:
            raise InvalidGenotypeError(
                f"genotype is from {self.name} version {g.version}, this is version {self.version}"
            )
        self._validate_choices(g.choices)

    @abc.abstractmethod
    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        """Space-specific check of the choices; raise InvalidGenotypeError."""

    @abc.abstractmethod
    def format(self, g: Genotype) -> str:
        """The canonical string form (e.g. the NAS-Bench-201 ``|op~i|+...`` string)."""

    @abc.abstractmethod
    def parse(self, text: str) -> Genotype:
        """Inverse of :meth:`format`; raises :class:`InvalidGenotypeError` on bad text."""

    # --- sampling and moves ---------------------------------------------------------
    @abc.abstractmethod
    def sample(self, rng: random.Random) -> Genotype:
        """Draw one architecture uniformly (or by the space's natural prior)."""

    def mutate(self, g: Genotype, rng: random.Random) -> Genotype:
        """Return a random neighbour of ``g`` (never ``g`` itself)."""
        options = self.neighbours(g)
        if not options:
            raise CapabilityError(f"space '{self.name}' has no neighbours of this genotype")
        return rng.choice(options)

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """All genotypes one elementary change away, in a deterministic order."""
        raise self._missing(NEIGHBOURS)

    # --- numeric views --------------------------------------------------------------
    def encode(self, g: Genotype) -> torch.Tensor:
        """A fixed-length float vector for model-based strategies (BO, SVGD)."""
        raise self._missing(ENCODE)

    def decode(self, x: torch.Tensor) -> Genotype:
        """The genotype nearest to an encoding (inverse of :meth:`encode` on its image)."""
        raise self._missing(ENCODE)

    @property
    def size(self) -> int | None:
        """Number of architectures, or ``None`` when not finite or not known."""
        return None

    def enumerate(self) -> Iterator[Genotype]:
        """Every architecture, in a stable order, where the space is finite."""
        raise self._missing(ENUMERATE)

    # --- networks -------------------------------------------------------------------
    def build(self, g: Genotype, **cfg: object) -> nn.Module:
        """The stand-alone network of ``g``."""
        raise self._missing(BUILD)

    def supernet(self, **cfg: object) -> nn.Module:
        """A weight-sharing network whose architecture parameters are explicit."""
        raise self._missing(SUPERNET)

    def network_factory(self, **cfg: object) -> NetworkFactory | None:
        """A faster way to build one network after another for sweeps, or None.

        Spaces whose ``build`` is slow next to scoring (module construction dominates on
        NAS-Bench-201) return a :class:`~nasforge.kernel.network_factory.NetworkFactory` that
        reuses modules between genotypes; it must give exactly what a seeded ``build``
        gives (see that module). None means sweeps rebuild every network.
        """
        return None

    # --- helpers --------------------------------------------------------------------
    def require(self, needed: frozenset[str] | set[str], *, by: str) -> None:
        """Raise :class:`CapabilityError` listing what ``by`` needs and this space lacks."""
        missing = sorted(set(needed) - self.capabilities)
        if missing:
            raise CapabilityError(
                f"{by} needs space capabilities {missing}, which '{self.name}' does not offer"
            )

    def _missing(self, capability: str) -> CapabilityError:
        return CapabilityError(f"space '{self.name}' does not support '{capability}'")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, version={self.version!r})"


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

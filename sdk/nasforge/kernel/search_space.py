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
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError
from nasforge.kernel.genotype import Genotype

if TYPE_CHECKING:  # torch loads when a network is built, not with the contract
    import torch
    from torch import nn

    from nasforge.kernel.decisions import Decision

# Capability names a space may declare; strategies list the ones they need.
SAMPLE = "sample"
MUTATE = "mutate"
NEIGHBOURS = "neighbours"
ENCODE = "encode"
ENUMERATE = "enumerate"
BUILD = "build"
SUPERNET = "supernet"
DECISIONS = "decisions"
STACK = "stack"


#: Where a space keeps the options it was made with (:attr:`SearchSpace.space_options`).
MADE_WITH = "_space_options"


def _named_options(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``args`` and ``kwargs`` of ``cls(...)`` by name (positional ones by the names its
    ``__init__`` gives them), less the run context's fields it declares."""
    import inspect

    from nasforge.kernel.context_fields import declared_fields

    named = dict(kwargs)
    if args:
        try:
            params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # type: ignore[misc]
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        named = dict(zip(positional, args, strict=False)) | named
    fields = declared_fields(cls)
    return {k: v for k, v in named.items() if k not in fields}


def own_state(space: object) -> dict[str, Any]:
    """What a space object was made into: its attributes, less the record of how its
    options were spelt (:data:`MADE_WITH`) and what it computed and cached on first use (a
    declared space's declaration). Two spaces with equal own state build the same networks,
    whichever of them has been used."""
    import functools

    cls = type(space)
    cached = {k for k in dir(cls) if isinstance(getattr(cls, k, None), functools.cached_property)}
    return {k: v for k, v in getattr(space, "__dict__", {}).items() if k != MADE_WITH and k not in cached}


@runtime_checkable
class NetworkFactory(Protocol):
    """Builds the stand-alone network of one genotype at a time, fast, for sweeps that
    build thousands (the contract: :mod:`nasforge.kernel.network_factory`)."""

    def build(self, g: Genotype, seed: int) -> nn.Module:
        """The network of ``g`` initialised from ``seed``; valid until the next call."""
        ...


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
    #: Keyword options :meth:`build` takes, declared by spaces whose ``build`` takes
    #: ``**cfg``; None reads them from its signature (see ``build_option_names``).
    build_options: ClassVar[frozenset[str] | None] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> SearchSpace:
        # the options the space is made with, kept so that a run or a genotype file can name
        # them (a copy or an unpickled space has its state, and with them these, restored)
        self = super().__new__(cls)
        self.__dict__[MADE_WITH] = _named_options(cls, args, kwargs)
        return self

    @property
    def space_options(self) -> dict[str, Any]:
        """The options this space was made with, by name (``CnnFamily(depths=[1, 2])``:
        ``{"depths": [1, 2]}``), less the run context's fields: what makes the same space
        again with ``type(space)(**space.space_options)``."""
        return dict(self.__dict__.get(MADE_WITH, {}))

    # --- identity -------------------------------------------------------------------
    def genotype(self, choices: Sequence[str | int]) -> Genotype:
        """Make (and validate) a genotype of this space from its choices."""
        g = Genotype(space=self.name, version=self.version, choices=tuple(choices))
        self.validate(g)
        return g

    def validate(self, g: Genotype) -> None:
        """Raise :class:`InvalidGenotypeError` unless ``g`` belongs to this space."""
        if not isinstance(g, Genotype):
            raise InvalidGenotypeError(f"expected a genotype of space '{self.name}', got {type(g).__name__}")
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

    def decisions(self) -> tuple[Decision, ...]:
        """One independent categorical decision per choice of a genotype, for samplers that
        know nothing of architectures (:mod:`nasforge.kernel.decisions`)."""
        raise self._missing(DECISIONS)

    @property
    def size(self) -> int | None:
        """Number of architectures, or ``None`` when not finite or not known."""
        return None

    def enumerate(self) -> Iterator[Genotype]:
        """Every architecture, in a stable order, where the space is finite."""
        raise self._missing(ENUMERATE)

    # --- networks (a space takes its own keywords: Any-typed *args/**cfg let it override) ---
    def build(self, g: Genotype, *args: Any, **cfg: Any) -> nn.Module:
        """The stand-alone network of ``g``."""
        raise self._missing(BUILD)

    def supernet(self, *args: Any, **cfg: Any) -> nn.Module:
        """A weight-sharing network whose architecture parameters are explicit."""
        raise self._missing(SUPERNET)

    def network_factory(self, *args: Any, **cfg: Any) -> NetworkFactory | None:
        """A faster way to build one network after another for sweeps, or None.

        Spaces whose ``build`` is slow next to scoring (module construction dominates on
        NAS-Bench-201) return a :class:`~nasforge.kernel.network_factory.NetworkFactory` that
        reuses modules between genotypes; it must give exactly what a seeded ``build``
        gives (see :mod:`nasforge.kernel.network_factory`). None means sweeps rebuild every network.
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

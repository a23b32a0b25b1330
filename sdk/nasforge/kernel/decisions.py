"""A space as independent categorical decisions: how a sampler that knows nothing of
architectures searches it (Optuna's TPE, GP and NSGA-II; a grid; a user's own sampler).

A space with the ``decisions`` capability
(:data:`~nasforge.kernel.search_space.DECISIONS`) returns from ``decisions()`` one
:class:`Decision` per element of its genotypes' ``choices``, in order: a name and the
values that element may take, and *every* combination of values is a valid genotype. A
genotype then reads as ``{decision name: value}`` and back (:func:`values_of`,
:func:`genotype_of`), and the space's size is the product of the decisions' sizes (the
conformance kit checks all of it). NAS-Bench-201 is six decisions of five ops; a DARTS
genotype 32 (each edge's op and its input node).

A space whose choices depend on each other (a value allowed only given another) does not
declare the capability: a sampler would propose invalid genotypes. A declared space whose
choices exist only given others (a block beyond the chosen depth) does declare it: a value
for a choice the network lacks is ignored, its genotype canonical, so several combinations
make one genotype and the size counts the genotypes (:mod:`nasforge.kernel.declaration`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype

Value = str | int


def _choices(_inst: Any, _attr: attrs.Attribute, value: tuple[Value, ...]) -> None:
    if not value:
        raise ValueError("a decision needs at least one choice")
    if any(isinstance(c, bool) or not isinstance(c, str | int) for c in value):
        raise ValueError(f"a decision's choices are strings or integers, got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"a decision's choices are distinct, got {value!r}")


@attrs.frozen
class Decision:
    """One categorical element of a genotype: its name and the values it may take."""

    name: str = attrs.field(
        validator=attrs.validators.and_(attrs.validators.instance_of(str), attrs.validators.min_len(1))
    )
    choices: tuple[Value, ...] = attrs.field(converter=to_tuple, validator=_choices)


class DecisionSpace(Protocol):
    """What these functions use of a :class:`~nasforge.kernel.search_space.SearchSpace` (a
    protocol, so the contract module does not import this one back)."""

    @property
    def name(self) -> str: ...
    def decisions(self) -> tuple[Decision, ...]: ...
    def genotype(self, choices: Sequence[Value]) -> Genotype: ...
    def validate(self, g: Genotype) -> None: ...


def decisions_of(space: DecisionSpace) -> tuple[Decision, ...]:
    """The space's decisions (a :class:`~nasforge.kernel.errors.CapabilityError` for a space
    without them), checked: at least one, names distinct."""
    found = tuple(space.decisions())
    names = [d.name for d in found]
    if not found or len(set(names)) != len(names):
        raise InvalidGenotypeError(f"space '{space.name}' declares decisions with missing or repeated names")
    return found


def genotype_of(space: DecisionSpace, values: Mapping[str, Any]) -> Genotype:
    """The genotype of one value per decision; a missing, unknown or foreign value is an
    :class:`~nasforge.kernel.errors.InvalidGenotypeError` naming it."""
    found = decisions_of(space)
    unknown = sorted(set(values) - {d.name for d in found})
    if unknown:
        raise InvalidGenotypeError(f"space '{space.name}' has no decision named {unknown[0]!r}")
    choices = []
    for d in found:
        if d.name not in values:
            raise InvalidGenotypeError(f"no value for decision {d.name!r} of space '{space.name}'")
        value = values[d.name]
        if isinstance(value, bool) or value not in d.choices:
            raise InvalidGenotypeError(f"decision {d.name!r}: {value!r} is not one of {list(d.choices)}")
        choices.append(value)
    return space.genotype(choices)


def values_of(space: DecisionSpace, g: Genotype) -> dict[str, Value]:
    """``g`` as ``{decision name: value}`` (the inverse of :func:`genotype_of`)."""
    space.validate(g)
    found = decisions_of(space)
    if len(found) != len(g.choices):
        raise InvalidGenotypeError(
            f"space '{space.name}' has {len(found)} decisions but its genotype {len(g.choices)} choices"
        )
    return {d.name: c for d, c in zip(found, g.choices, strict=True)}


__all__ = ["Decision", "DecisionSpace", "Value", "decisions_of", "genotype_of", "values_of"]

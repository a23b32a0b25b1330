"""The end of any search: the best genotype(s), the history, and what produced them."""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.converters import to_dict, to_tuple
from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result, Trial


@attrs.frozen
class SearchOutcome:
    """The end of any search: the best genotype(s), the history, and what produced them."""

    best: Genotype
    best_result: Result | None
    history: tuple[Trial, ...] = attrs.field(converter=to_tuple, factory=tuple)
    produced_by: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    #: Extra genotypes for methods that return several (ensembles, Pareto sets).
    members: tuple[Genotype, ...] = attrs.field(converter=to_tuple, factory=tuple)
    #: A multi-objective run's Pareto front: the trials behind ``members``, best first
    #: (``best`` is the first; see :meth:`nasforge.kernel.objectives.SearchGoal.front`).
    front: tuple[Trial, ...] = attrs.field(converter=to_tuple, factory=tuple)
    #: An ensemble search's result (members, weights, combine rule, per-member scores);
    #: ``members`` then holds the same genotypes and ``best`` one of them. None otherwise.
    ensemble: Ensemble | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(Ensemble))
    )

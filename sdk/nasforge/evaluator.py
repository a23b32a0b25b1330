"""The Evaluator interface: turn a genotype into a :class:`~nasforge.result.Result`."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from nasforge.errors import CapabilityError
from nasforge.genotype import Genotype
from nasforge.result import Objective, Result
from nasforge.search_space import SearchSpace


class Evaluator(abc.ABC):
    """Trains, looks up, scores or otherwise measures architectures.

    Subclasses set ``name`` and ``objective``; ``simulated`` says whether ``Result.cost``
    is a simulated clock (tabular benchmarks) rather than wall time.
    Constructed as ``cls(space, dataset=..., **options)``.
    """

    name: ClassVar[str]
    simulated: ClassVar[bool] = False
    #: The space names this evaluator works on; empty means any space.
    spaces: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, space: SearchSpace, *, dataset: str | None = None) -> None:
        if self.spaces and space.name not in self.spaces:
            raise CapabilityError(
                f"evaluator '{self.name}' works on spaces {sorted(self.spaces)}, not '{space.name}'"
            )
        self.space = space
        self.dataset = dataset

    @property
    @abc.abstractmethod
    def objective(self) -> Objective:
        """The primary objective this evaluator reports."""

    @abc.abstractmethod
    def evaluate(self, g: Genotype) -> Result:
        """Measure one genotype.

        A genotype of another space raises :class:`~nasforge.errors.InvalidGenotypeError`
        (a caller bug); failures while measuring a valid one (divergence, out of memory)
        are the architecture's and become ``Result(failed=True)``, so a search goes on.
        """

    def describe(self) -> dict[str, Any]:
        """Facts for the journal header: dataset, benchmark hashes, settings."""
        return {"evaluator": self.name, "dataset": self.dataset}

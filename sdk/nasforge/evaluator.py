"""The Evaluator interface: turn a genotype into a :class:`~nasforge.result.Result`."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

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
        self.space = space
        self.dataset = dataset

    @property
    @abc.abstractmethod
    def objective(self) -> Objective:
        """The primary objective this evaluator reports."""

    @abc.abstractmethod
    def evaluate(self, g: Genotype) -> Result:
        """Measure one genotype. Errors of the architecture become a failed Result."""

    def describe(self) -> dict[str, Any]:
        """Facts for the journal header: dataset, benchmark hashes, settings."""
        return {"evaluator": self.name, "dataset": self.dataset}

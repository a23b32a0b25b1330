"""Where evaluations run. Strategies never see this: the experiment hands a batch of
genotypes to an executor and gets results back in the same order, which keeps runs
deterministic whatever runs them."""

from __future__ import annotations

import abc
import concurrent.futures as cf
from collections.abc import Sequence
from typing import Any, ClassVar

from nasforge.evaluator import Evaluator
from nasforge.genotype import Genotype
from nasforge.result import Result


def evaluate_safely(evaluator: Evaluator, g: Genotype) -> Result:
    """Evaluate, turning an exception into a failed result instead of a dead search."""
    try:
        return evaluator.evaluate(g)
    except Exception as exc:  # one bad architecture must not end the search
        return Result(objectives={}, failed=True, error=f"{type(exc).__name__}: {exc}")


class Executor(abc.ABC):
    """Evaluates a batch of genotypes; results come back in input order."""

    name: ClassVar[str]
    workers: int = 1

    @abc.abstractmethod
    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype]) -> list[Result]:
        """Evaluate every genotype."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release workers."""


class InProcessExecutor(Executor):
    """The default: one evaluation at a time in this process.

    ``workers`` only sets how many genotypes are asked per batch, so an in-process run
    with ``workers=N`` reproduces exactly what a pool or Ray run with N workers does.
    """

    name = "inprocess"

    def __init__(self, workers: int = 1, **_: Any) -> None:
        self.workers = workers

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype]) -> list[Result]:
        return [evaluate_safely(evaluator, g) for g in genotypes]


class ProcessPoolExecutor(Executor):
    """A local process pool for evaluators that train (the evaluator must pickle)."""

    name = "process"

    def __init__(self, workers: int = 2, **_: Any) -> None:
        self.workers = workers
        self._pool = cf.ProcessPoolExecutor(max_workers=workers)

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype]) -> list[Result]:
        return list(self._pool.map(evaluate_safely, [evaluator] * len(genotypes), genotypes))

    def close(self) -> None:
        self._pool.shutdown()

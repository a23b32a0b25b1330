"""The tabular NAS-Bench-201 evaluator: a table lookup with a simulated training clock.

Looking an architecture up costs microseconds, but a fair comparison of search strategies
needs the time a real search would have spent, so every Result carries a simulated cost
from :class:`~nasforge_nb201.clock.TrainingClock` (see its module for the model and its
calibration) and ``simulated = True`` tells budgets and anytime curves to use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from nasforge.errors import CapabilityError, NasforgeError
from nasforge.evaluator import Evaluator
from nasforge.genotype import Genotype
from nasforge.result import Objective, Result
from nasforge.search_space import SearchSpace
from nasforge_nb201 import arch
from nasforge_nb201.clock import TrainingClock
from nasforge_nb201.datasets import benchmark_dataset
from nasforge_nb201.table import TABLE_FILE, load_table

OBJECTIVE = Objective("test_accuracy", higher_is_better=True)


class NB201TableEvaluator(Evaluator):
    """200-epoch test accuracy (percent) of a cell on one benchmark dataset.

    The table has no validation column: searching on test accuracy is the usual stand-in
    on this benchmark, and must be reported as such.
    """

    name: ClassVar[str] = "nb201-table"
    simulated: ClassVar[bool] = True
    spaces: ClassVar[frozenset[str]] = frozenset({arch.SPACE_NAME})

    def __init__(
        self,
        space: SearchSpace,
        *,
        dataset: str | None = "cifar10",
        clock: TrainingClock | Mapping[str, Any] | None = None,
    ) -> None:
        """``clock`` may be a plain dict of :class:`TrainingClock` fields (e.g.
        ``{"epochs": 100}``) so that JSON experiment specs and journals can carry it."""
        if space.name not in self.spaces:
            raise CapabilityError(
                f"evaluator '{self.name}' works on space '{arch.SPACE_NAME}', not '{space.name}'"
            )
        info = benchmark_dataset("cifar10" if dataset is None else dataset)
        super().__init__(space, dataset=info.name)
        self._info = info
        self.clock = _make_clock(clock)

    @property
    def objective(self) -> Objective:
        return OBJECTIVE

    def evaluate(self, g: Genotype) -> Result:
        """Look ``g`` up.

        A genotype of another space (or a malformed one) is the caller's error and raises
        :class:`~nasforge.errors.InvalidGenotypeError`, as the conformance kit expects;
        every valid cell is in the table, so no lookup of a valid cell can fail.
        """
        self.space.validate(g)
        ops: tuple[str, ...] = tuple(g.choices)  # type: ignore[arg-type]
        table = load_table()
        index = table.index_of_code(arch.to_code(ops))
        return Result(
            objectives={OBJECTIVE.name: table.accuracy_of(index, self._info.name)},
            cost=self.clock.training_seconds(ops, self._info),
            metadata={"index": index, "arch": arch.to_string(ops)},
        )

    def describe(self) -> dict[str, Any]:
        """Adds what a journal needs to reproduce the numbers: table hash and clock."""
        return {
            **super().describe(),
            "table": TABLE_FILE,
            "table_sha256": load_table().sha256,
            "clock": attrs.asdict(self.clock),
        }


def _make_clock(clock: TrainingClock | Mapping[str, Any] | None) -> TrainingClock:
    if clock is None:
        return TrainingClock()
    if isinstance(clock, TrainingClock):
        return clock
    if isinstance(clock, Mapping):
        try:
            return TrainingClock(**clock)
        except (TypeError, ValueError) as exc:
            fields = ", ".join(a.name for a in attrs.fields(TrainingClock))
            raise NasforgeError(f"bad nb201-table clock {dict(clock)!r}: {exc} (fields: {fields})") from exc
    raise NasforgeError(f"nb201-table clock must be a TrainingClock or a dict, got {clock!r}")

"""The tabular NAS-Bench-201 evaluator, following the benchmark protocol.

The protocol (NAS-Bench-201 paper, NATS-Bench): a search observes the 200-epoch
*validation* accuracy, pays the benchmark's recorded training time, and the run reports
the *test* accuracy of the cell validation chose. So every Result carries all the
recorded numbers (validation and test accuracy, training seconds, latency, parameters;
the journal keeps them), the objective a strategy maximises is ``valid_accuracy``, and
the cost is the recorded ``train_seconds``: a simulated clock that is the benchmark's
own, not a model of ours (``simulated = True`` tells budgets and anytime curves to use it).

Selecting on test accuracy remains possible (``fitness="test"``) because older results
and some papers did so, but it measures a search on the data it was tuned on; it warns.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, ClassVar, Literal

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import check_option
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import SearchSpace
from nasforge_nb201 import arch
from nasforge_nb201.datasets import benchmark_dataset, dataset_position
from nasforge_nb201.table import HIGHER_IS_BETTER, METRICS, TABLE_FILE, load_table

logger = logging.getLogger("nasforge.nb201")

#: Every objective a Result of this evaluator carries, with its direction.
OBJECTIVES: dict[str, Objective] = {m: Objective(m, higher_is_better=HIGHER_IS_BETTER[m]) for m in METRICS}
#: ``fitness`` option -> the objective a strategy then maximises.
FITNESS_OBJECTIVES: dict[str, str] = {"valid": "valid_accuracy", "test": "test_accuracy"}
#: What a run reports for the cell it chose, and what a query costs.
REPORTED = "test_accuracy"
COST = "train_seconds"

Fitness = Literal["valid", "test"]


class FitnessOnTestSetWarning(UserWarning):
    """A search selects on test accuracy, so its reported test accuracy is optimistic."""


class NB201TableEvaluator(Evaluator):
    """Recorded 200-epoch numbers of a cell on one benchmark dataset (validation as fitness)."""

    name: ClassVar[str] = "nb201-table"
    simulated: ClassVar[bool] = True
    spaces: ClassVar[frozenset[str]] = frozenset({arch.SPACE_NAME})

    def __init__(
        self,
        space: SearchSpace,
        *,
        dataset: str | None = "cifar10",
        fitness: Fitness = "valid",
    ) -> None:
        """``fitness="test"`` opts out of the protocol (see the module docstring) and warns."""
        if space.name not in self.spaces:
            raise CapabilityError(
                f"evaluator '{self.name}' works on space '{arch.SPACE_NAME}', not '{space.name}'"
            )
        check_option("fitness", fitness, Fitness)
        info = benchmark_dataset("cifar10" if dataset is None else dataset)
        super().__init__(space, dataset=info.name)
        self._info = info
        self._position = dataset_position(info.name)
        self.fitness = fitness
        if fitness == "test":
            message = (
                f"nb201-table on {info.name}: fitness='test' makes the search select on test accuracy, "
                "so the test accuracy it reports is measured on the set it was tuned on (optimistic, "
                "not comparable with the benchmark protocol); the default fitness='valid' follows it"
            )
            warnings.warn(message, FitnessOnTestSetWarning, stacklevel=2)
            logger.warning(message)

    @property
    def objective(self) -> Objective:
        return OBJECTIVES[FITNESS_OBJECTIVES[self.fitness]]

    @property
    def objectives(self) -> dict[str, Objective]:
        """Every recorded number, with its direction: a run may optimise or constrain any."""
        return dict(OBJECTIVES)

    @property
    def reported(self) -> str:
        """The chosen cell's test accuracy (under ``fitness="test"`` too: it is what was optimised)."""
        return REPORTED

    def evaluate(self, g: Genotype) -> Result:
        """Look ``g`` up.

        A genotype of another space (or a malformed one) is the caller's error and raises
        :class:`~nasforge.kernel.errors.InvalidGenotypeError`, as the conformance kit expects;
        every valid cell is in the table, so no lookup of a valid cell can fail.
        """
        self.space.validate(g)
        ops: tuple[str, ...] = tuple(g.choices)  # type: ignore[arg-type]
        table = load_table()
        index = table.index_of_code(arch.to_code(ops))
        objectives = table.objectives(index, self._info.name)
        return Result(
            objectives=objectives,
            cost=objectives[COST],
            metadata={
                "index": index,
                "arch": arch.to_string(ops),
                "valid_seeds": int(table.valid_seeds[index, self._position]),
            },
        )

    def describe(self) -> dict[str, Any]:
        """Adds what a journal needs to reproduce and read the numbers: table and protocol."""
        return {
            **super().describe(),
            "table": TABLE_FILE,
            "table_sha256": load_table().sha256,
            "protocol": {
                "fitness": self.objective.name,
                "reported": REPORTED,
                "cost": f"{COST} (recorded, 200 epochs)",
                "objectives": list(OBJECTIVES),
                "follows_benchmark_protocol": self.fitness == "valid",
            },
        }

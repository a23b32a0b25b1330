"""The ask/tell Strategy interface: black-box search that never knows who evaluates, or
where, and resumes by replay: rebuilt with the same seed and fed the journal's results, it
stands where it stood (PyGlove's recover). One-shot methods: :mod:`nasforge.kernel.one_shot`.
"""

from __future__ import annotations

import abc
import random
from typing import Any, ClassVar

from nasforge.kernel.errors import OptionError
from nasforge.kernel.fidelity import Proposal
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.objectives import SearchGoal, as_goal
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import SAMPLE, SearchSpace


class Strategy(abc.ABC):
    """An ask/tell search strategy over one space.

    A run builds it as ``cls(space, objective=..., seed=..., **options)`` plus the run
    context's fields it declares (:mod:`nasforge.kernel.run_context`); options are plain
    JSON values so the journal can record and a resume can rebuild them. There is no
    ``state_dict``: resume is replay, so ``ask`` must depend only on the seed, the options
    and the results told so far (the conformance kit checks it). Keeping state that way
    is the whole contract; a second, serialised copy of it could only drift from it.

    ``objective`` is the run's :class:`~nasforge.kernel.objectives.SearchGoal` (a plain
    :class:`Objective` means a goal of one, unconstrained; ``self.goal`` is always the
    goal). Through :meth:`fitness` and :meth:`rank` every strategy ranks infeasible and
    failed results last without handling constraints itself. A strategy that can search
    several objectives at once sets ``multi_objective = True`` and reads
    ``self.goal.objectives``; any other is refused a goal of several, in one line.
    """

    name: ClassVar[str]
    #: Space capabilities this strategy needs (checked before the search starts).
    requires: ClassVar[frozenset[str]] = frozenset({SAMPLE})
    #: Whether the strategy searches several objectives at once (a Pareto front).
    multi_objective: ClassVar[bool] = False
    context_fields: ClassVar[frozenset[str]] = frozenset({"seed"})

    def __init__(self, space: SearchSpace, *, objective: Objective, seed: int = 0) -> None:
        space.require(self.requires, by=f"strategy '{self.name}'")
        self.goal: SearchGoal = as_goal(objective)
        if self.goal.multi_objective and not self.multi_objective:
            raise OptionError(
                f"strategy '{self.name}' optimises one objective, but the run names "
                f"{len(self.goal.objectives)} ({', '.join(self.goal.objective_texts())}); "
                "choose a multi-objective strategy or one objective"
            )
        self.space = space
        self.objective = objective
        self.seed = seed
        self.rng = random.Random(seed)

    @abc.abstractmethod
    def ask(self) -> Genotype | Proposal:
        """Propose the next genotype to evaluate.

        A multi-fidelity strategy returns a :class:`~nasforge.kernel.fidelity.Proposal` (the
        genotype and a budget, e.g. epochs, below the evaluator's full one); it is then
        told the result with that same proposal. The context field ``max_fidelity``
        gives the evaluator's full budget, unless the user sets it.
        """

    @abc.abstractmethod
    def tell(self, g: Any, result: Result) -> None:  # Any: a subclass takes what its own ask returns
        """Feed back the result of what this strategy proposed (as ``ask`` returned it)."""

    @property
    def finished(self) -> bool:
        """Whether the strategy has nothing more to propose (e.g. a fixed candidate list,
        all asked). The run then ends as if its budget were spent, with a line saying so,
        instead of asking on and being stopped by repeated proposals. Default: never."""
        return False

    def fitness(self, result: Result) -> float:
        """The result as a number to maximise: the first objective, ``-inf`` for a failed
        or infeasible result (what a strategy that needs one number uses)."""
        return self.goal.fitness(result)

    def rank(self, result: Result) -> tuple[float, ...]:
        """A key to compare results by, larger is better: feasible before infeasible, a
        smaller violation first among infeasible ones, then the objectives in order. It
        tells infeasible results apart where :meth:`fitness` makes them all ``-inf``, so
        a strategy that only compares results can steer towards the feasible region."""
        return self.goal.rank(result)

"""What the parts of a run's loop see of the run: :class:`~nasforge.run.experiment.Experiment`
is one, and the parts never import it (it is built from them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.executor_contract import Executor
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.run.run_events import RunEvents
from nasforge.run.spec import ExperimentSpec
from nasforge.run.stop_rules import StopRule


class RunFace(Protocol):
    """A run as its loop, stop judge and end see it; hooks receive the run itself."""

    space: SearchSpace
    strategy: Strategy
    evaluator: Evaluator
    spec: ExperimentSpec
    executor: Executor
    registry: Registry
    events: RunEvents
    console: Console
    run_dir: Path | None
    goal: SearchGoal
    stop_rules: tuple[StopRule, ...]
    trials: list[Trial]
    stopped: dict[str, Any] | None

    def best_value(self) -> float: ...

    def fidelity_spent(self) -> int | None: ...

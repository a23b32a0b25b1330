"""The Python face of the main CLI tasks: one call per command, same defaults."""

from __future__ import annotations

import os
from typing import Any

from nasforge.budget import Budget
from nasforge.experiment import Experiment
from nasforge.registry import Registry, get_registry
from nasforge.result import SearchOutcome
from nasforge.search_space import SearchSpace
from nasforge.spec import ExperimentSpec


def load_space(name: str, *, registry: Registry | None = None, **options: Any) -> SearchSpace:
    """The registered search space ``name``, constructed with ``options``."""
    return (registry or get_registry()).get("space", name)(**options)


def search(
    space: str = "nb201",
    strategy: str = "rea",
    evaluator: str = "nb201-table",
    *,
    dataset: str | None = "cifar10",
    trials: int | None = None,
    seconds: float | None = None,
    simulated_seconds: float | None = None,
    seed: int = 0,
    run_dir: str | os.PathLike[str] | None = None,
    space_options: dict[str, Any] | None = None,
    strategy_options: dict[str, Any] | None = None,
    evaluator_options: dict[str, Any] | None = None,
    executor: str = "inprocess",
    workers: int = 1,
    dedup: bool = True,
    progress: bool = False,
    registry: Registry | None = None,
) -> SearchOutcome:
    """Run a journaled search (the Python twin of ``nasforge search``).

    With no budget given the search runs 100 trials. With ``run_dir`` every trial is
    journaled and an interrupted run continues with :func:`resume`.
    """
    if trials is None and seconds is None and simulated_seconds is None:
        trials = 100
    spec = ExperimentSpec(
        space=space,
        strategy=strategy,
        evaluator=evaluator,
        dataset=dataset,
        budget=Budget(trials=trials, seconds=seconds, simulated_seconds=simulated_seconds),
        seed=seed,
        space_options=space_options or {},
        strategy_options=strategy_options or {},
        evaluator_options=evaluator_options or {},
        executor=executor,
        workers=workers,
        dedup=dedup,
    )
    return Experiment.from_spec(spec, run_dir=run_dir, registry=registry, progress=progress).run()


def resume(
    run_dir: str | os.PathLike[str], *, progress: bool = False, registry: Registry | None = None
) -> SearchOutcome:
    """Continue (or, if it ended, re-read) the journaled run in ``run_dir``."""
    return Experiment.resume(run_dir, registry=registry, progress=progress).run()

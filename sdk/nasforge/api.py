"""The Python face of the main CLI tasks: one call per command, same defaults."""

from __future__ import annotations

import os
from typing import Any

from nasforge.budget import Budget
from nasforge.errors import NasforgeError
from nasforge.experiment import Experiment
from nasforge.journal import JournalReader
from nasforge.one_shot_run import is_one_shot, resume_one_shot, run_one_shot
from nasforge.registry import Registry, get_registry
from nasforge.result import SearchOutcome
from nasforge.search_space import SearchSpace
from nasforge.spec import ExperimentSpec

DEFAULT_TRIALS = 100


def load_space(name: str, *, registry: Registry | None = None, **options: Any) -> SearchSpace:
    """The registered search space ``name``, constructed with ``options``."""
    return (registry or get_registry()).space(name, **options)


def build_spec(
    space: str = "nb201",
    strategy: str = "rea",
    evaluator: str | None = None,
    *,
    dataset: str | None = None,
    trials: int | None = None,
    seconds: float | None = None,
    simulated_seconds: float | None = None,
    seed: int = 0,
    space_options: dict[str, Any] | None = None,
    strategy_options: dict[str, Any] | None = None,
    evaluator_options: dict[str, Any] | None = None,
    executor: str = "inprocess",
    workers: int = 1,
    dedup: bool = True,
    registry: Registry | None = None,
) -> ExperimentSpec:
    """A spec with the CLI's defaults filled in, for ask/tell and one-shot strategies.

    Ask/tell: evaluator ``nb201-table``, dataset ``cifar10``, 100 trials unless a budget is
    given. One-shot: ``dataset`` is the training data (``digits``); the search's length
    is a strategy option (``epochs``), so a budget is refused.
    """
    base = ExperimentSpec(
        space=space,
        strategy=strategy,
        evaluator=evaluator,
        budget=None,
        dataset=dataset,
        seed=seed,
        space_options=space_options or {},
        strategy_options=strategy_options or {},
        evaluator_options=evaluator_options or {},
        executor=executor,
        workers=workers,
        dedup=dedup,
    )
    import attrs

    has_budget = trials is not None or seconds is not None or simulated_seconds is not None
    if is_one_shot(base, registry):
        if has_budget:
            raise NasforgeError(f"'{strategy}' is one-shot: set its length with -o epochs=N, not a budget")
        return attrs.evolve(base, dataset=dataset or "digits")
    if not has_budget:
        trials = DEFAULT_TRIALS
    return attrs.evolve(
        base,
        evaluator=evaluator or "nb201-table",
        dataset=dataset or "cifar10",
        budget=Budget(trials=trials, seconds=seconds, simulated_seconds=simulated_seconds),
    )


def search(
    space: str = "nb201",
    strategy: str = "rea",
    evaluator: str | None = None,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    registry: Registry | None = None,
    **spec_options: Any,
) -> SearchOutcome:
    """Run a journaled search (the Python twin of ``nasforge search``).

    ``spec_options`` are those of :func:`build_spec` (dataset, trials, seed, ...). With
    ``run_dir`` every trial is journaled and an interrupted run continues with
    :func:`resume`.

    Raises :class:`~nasforge.errors.SearchFailedError` when every trial failed (there is
    no best to return), :class:`~nasforge.errors.CapabilityError` when the evaluator
    cannot serve the space (before any trial), and
    :class:`~nasforge.errors.RunInUseError` when another process writes ``run_dir``.
    """
    spec = build_spec(space, strategy, evaluator, registry=registry, **spec_options)
    if is_one_shot(spec, registry):
        return run_one_shot(spec, run_dir=run_dir, registry=registry, progress=progress).outcome
    return Experiment.from_spec(spec, run_dir=run_dir, registry=registry, progress=progress).run()


def resume(
    run_dir: str | os.PathLike[str], *, progress: bool = False, registry: Registry | None = None
) -> SearchOutcome:
    """Continue (or, if it ended, re-read) the journaled run in ``run_dir``.

    A run that ended is only read (nothing is opened for writing, so read-only media
    work); one that did not takes the run directory's lock, and is refused with
    :class:`~nasforge.errors.RunInUseError` while another process writes it.
    """
    if JournalReader.of_run(run_dir).header.get("mode") == "one-shot":
        return resume_one_shot(run_dir, progress=progress, registry=registry).outcome
    return Experiment.resume(run_dir, registry=registry, progress=progress).run()

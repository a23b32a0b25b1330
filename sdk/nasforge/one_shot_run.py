"""Run a one-shot strategy (DARTS, PR-DARTS, NASI, ...) from a spec, journaled.

A one-shot search trains a supernet, so it cannot be replayed trial by trial the way an
ask/tell search can: its journal records each epoch's derived architecture as it happens
(nothing seen is lost), and an interrupted run is restarted from the beginning, which
the seed makes reproduce the same architecture. The old journal is kept beside it.

One process writes a run directory at a time (:mod:`nasforge.run_lock`); a finished run
is only read, so it can be re-read from read-only media.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console

from nasforge.datasets import TensorData
from nasforge.environment import describe_environment
from nasforge.errors import JournalError, NasforgeError
from nasforge.genotype import Genotype
from nasforge.journal import JournalReader, JournalWriter, is_unstarted, journal_path
from nasforge.registry import Registry, get_registry
from nasforge.result import Result, SearchOutcome
from nasforge.run_lock import RunLock
from nasforge.search_space import SearchSpace
from nasforge.spec import ExperimentSpec, construct
from nasforge.strategy import OneShotStrategy


@attrs.frozen
class OneShotRun:
    """What a one-shot run produced: the outcome and, if an evaluator was named, its verdict."""

    outcome: SearchOutcome
    space: SearchSpace
    data: TensorData
    evaluation: Result | None
    run_dir: Path | None
    seconds: float


def is_one_shot(spec: ExperimentSpec, registry: Registry | None = None) -> bool:
    cls = (registry or get_registry()).get("strategy", spec.strategy)
    return isinstance(cls, type) and issubclass(cls, OneShotStrategy)


def run_one_shot(
    spec: ExperimentSpec,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> OneShotRun:
    registry = registry or get_registry()
    space = spec.build_space(registry)
    cls = registry.get("strategy", spec.strategy)
    if not issubclass(cls, OneShotStrategy):
        raise NasforgeError(f"strategy '{spec.strategy}' is ask/tell; run it with an evaluator and a budget")
    space.require(cls.requires, by=f"strategy '{cls.name}'")
    evaluator = None
    if spec.evaluator is not None:
        evaluator = spec.build_evaluator(registry, space, dataset=spec.evaluator_options.get("dataset"))
        evaluator.preflight()
    if spec.dataset is None:
        raise NasforgeError(
            f"one-shot strategy '{spec.strategy}' needs a --dataset to train on (e.g. digits)"
        )
    data = registry.get("dataset", spec.dataset).load(seed=spec.seed)
    strategy_options = dict(spec.strategy_options)
    if "progress" in _init_params(cls):
        strategy_options.setdefault("progress", progress)
    strategy = construct("strategy", cls, strategy_options, seed=spec.seed)
    if console is not None and hasattr(strategy, "console"):
        strategy.console = console

    lock: RunLock | None = None
    writer: JournalWriter | None = None
    try:
        if run_dir is not None:
            lock = RunLock(run_dir).acquire()
            path = journal_path(run_dir)
            if not is_unstarted(path):
                _check_same_run(path, spec)
                path.rename(path.with_suffix(f".interrupted-{int(time.time())}.jsonl"))
            writer = JournalWriter(path)  # an unstarted file's torn header is cut first
            writer.header(
                {
                    "spec": spec.to_json(),
                    "mode": "one-shot",
                    "space": {"name": space.name, "version": space.version},
                    "data": {"name": data.name, "digest": data.digest(), "shape": list(data.input_shape)},
                    "evaluator": evaluator.describe() if evaluator is not None else None,
                    "objective": attrs.asdict(evaluator.objective) if evaluator is not None else None,
                    "environment": describe_environment(),
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                }
            )
        t0 = time.perf_counter()
        outcome = strategy.fit(space, data, on_trial=writer.trial if writer is not None else None)
        space.validate(outcome.best)
        evaluation = evaluator.evaluate(outcome.best) if evaluator is not None else None
        if writer is not None:
            writer.end(
                {
                    "best": outcome.best.to_json(),
                    "best_text": space.format(outcome.best),
                    "trials": len(outcome.history),
                    "evaluation": evaluation.to_json() if evaluation is not None else None,
                }
            )
    finally:
        if writer is not None:
            writer.close()
        if lock is not None:
            lock.release()
    return OneShotRun(
        outcome, space, data, evaluation, Path(run_dir) if run_dir else None, time.perf_counter() - t0
    )


def _init_params(cls: type) -> set[str]:
    import inspect

    return set(inspect.signature(cls).parameters)


def _check_same_run(path: Path, spec: ExperimentSpec) -> None:
    header = JournalReader(path).header
    if header.get("spec") != spec.to_json():
        recorded = (header.get("space") or {}).get("name")
        if recorded and recorded != spec.space:
            raise NasforgeError(f"journal in {path.parent} is from space '{recorded}', not '{spec.space}'")
        raise NasforgeError(
            f"journal in {path.parent} was made with different settings; use another run directory"
        )


def resume_one_shot(run_dir: str | os.PathLike[str], **kwargs: Any) -> OneShotRun:
    """Finish an interrupted one-shot run (restarted from its spec; see the module docstring)."""
    reader = JournalReader.of_run(run_dir)
    try:
        spec = ExperimentSpec.from_json(reader.header["spec"])
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{reader.path}: header holds no usable experiment spec ({exc})") from exc
    if reader.end is None:
        return run_one_shot(spec, run_dir=run_dir, **kwargs)
    registry = kwargs.get("registry") or get_registry()
    space = spec.build_space(registry)
    best = Genotype.from_json(reader.end["best"])
    space.validate(best)
    evaluation = reader.end.get("evaluation")
    outcome = SearchOutcome(
        best=best,
        best_result=reader.trials[-1].result if reader.trials else None,
        history=reader.trials,
        produced_by={"spec": spec.to_json()},
    )
    data = registry.get("dataset", spec.dataset).load(seed=spec.seed)
    result = Result.from_json(evaluation) if evaluation else None
    return OneShotRun(outcome, space, data, result, Path(run_dir), 0.0)

"""Run a one-shot strategy (DARTS, PR-DARTS, NASI, ...) from a spec, journaled.

A one-shot search trains a supernet, so it cannot be replayed trial by trial the way an
ask/tell search can: its journal records each epoch's derived architecture as it happens
(nothing seen is lost), and an interrupted run is restarted from the beginning, which
the seed makes reproduce the same architecture. The old journal is kept beside it.

One process writes a run directory at a time (:mod:`nasforge.run.run_lock`); a finished run
is only read, so it can be re-read from read-only media. The registry's event hooks
(``nasforge_trial_end`` per epoch or sample, ``nasforge_search_end``) fire as for an
ask/tell run, with a :class:`OneShotSearch` as their ``experiment``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import attrs
import torch
from rich.console import Console

from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import OneShotStrategy, one_shot_strategy
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.space_source import space_header
from nasforge.kernel.supernet import supernet_option_names
from nasforge.run.construction import build_component, context_fields_of
from nasforge.run.ensemble_training import evaluate_members
from nasforge.run.environment import describe_environment
from nasforge.run.journal_file import JournalReader, JournalWriter, is_unstarted, journal_path
from nasforge.run.plugin_faults import FAULTS_KEY, PluginFault, recorded_faults
from nasforge.run.run_data import check_recorded_data, data_record
from nasforge.run.run_end import with_faults
from nasforge.run.run_events import RunEvents, log_end, log_start
from nasforge.run.run_lock import RunLock
from nasforge.run.spec import ExperimentSpec, spec_differences


@attrs.frozen
class OneShotRun:
    """What a one-shot run produced: the outcome and, if an evaluator was named, its verdict."""

    outcome: SearchOutcome
    space: SearchSpace
    data: TensorData
    evaluation: Result | None
    run_dir: Path | None
    seconds: float
    #: The plugins whose event hooks raised in this run (it went on without them).
    plugin_faults: list[PluginFault] = attrs.field(factory=list)


@attrs.frozen(eq=False)
class OneShotSearch:
    """A one-shot run as its event hooks see it (their ``experiment`` argument; an ask/tell
    run passes its :class:`~nasforge.run.experiment.Experiment`, which has the same first
    four attributes), so a logger written for one kind of run serves both."""

    spec: ExperimentSpec
    space: SearchSpace
    run_dir: Path | None
    registry: Registry
    strategy: OneShotStrategy
    data: TensorData
    evaluator: Any


def is_one_shot(spec: ExperimentSpec, registry: Registry | None = None) -> bool:
    """Whether ``spec``'s strategy is one-shot (``registry``: the default one if None)."""
    return spec.is_one_shot(registry if registry is not None else get_registry())


def run_one_shot(
    spec: ExperimentSpec,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
    progress: bool = True,
    console: Console | None = None,
    data: TensorData | None = None,
    events: RunEvents | None = None,
) -> OneShotRun:
    """Search ``spec`` with its one-shot strategy, journaled in ``run_dir`` if given.

    Every component comes from ``registry`` (the process-wide default if None) and is
    built from the run's context; the training data (``data`` where the caller holds it
    in memory, else loaded by name or path) is loaded once and handed to the strategy (and
    to an evaluator that trains on it), and ``events`` (default: the registry's event
    hooks) see each trial and the outcome.
    """
    registry = registry if registry is not None else get_registry()
    events = events if events is not None else RunEvents(registry)
    space, strategy, data, evaluator = _components(spec, registry, progress=progress, data=data)
    if console is not None and hasattr(strategy, "console"):
        strategy.console = console
    has_bar = "progress" in context_fields_of("strategy", one_shot_strategy(registry, spec.strategy))
    search = OneShotSearch(
        spec, space, Path(run_dir) if run_dir is not None else None, registry, strategy, data, evaluator
    )

    lock: RunLock | None = None
    writer: JournalWriter | None = None
    try:
        if run_dir is not None:
            lock = RunLock(run_dir).acquire()
            writer = _start_journal(Path(run_dir), spec, registry, space, data, evaluator)

        # where the strategy's own bar is not live on a terminal, progress goes to the log
        live = has_bar and bar_is_live(bool(spec.strategy_options.get("progress", progress)), console)
        log = ProgressLog("nasforge.one_shot", f"{spec.strategy} on {space.name}", silent=live)
        trials_seen = 0

        def on_trial(trial: Trial) -> None:
            nonlocal trials_seen
            if writer is not None:
                writer.trial(trial)
            events.trial_end(search, trial)
            trials_seen += 1
            log.update(trials_seen, _describe(trial))

        what = f"{spec.strategy} on {space.name}"
        log_start(what, seed=spec.seed, data=spec.train_data, device=spec.device, run_dir=search.run_dir)
        t0 = time.perf_counter()
        outcome = strategy.fit(space, data, on_trial=on_trial)
        space.validate(outcome.best)
        log.finish(trials_seen)
        outcome, evaluation = _evaluated(outcome, evaluator)
        events.plugins_search_end(search, outcome)  # first, so the end record keeps their faults
        outcome = with_faults(outcome, events.plugin_faults)
        if writer is not None:
            faults = outcome.produced_by.get(FAULTS_KEY)
            writer.end(
                {
                    "best": outcome.best.to_json(),
                    "best_text": space.format(outcome.best),
                    "trials": len(outcome.history),
                    "evaluation": evaluation.to_json() if evaluation is not None else None,
                    **_ensemble_record(outcome, space),
                    **({FAULTS_KEY: faults} if faults else {}),
                }
            )
    finally:
        if writer is not None:
            writer.close()
        if lock is not None:
            lock.release()
    seconds = time.perf_counter() - t0
    log_end(what, outcome, seconds, run_dir=search.run_dir)
    events.search_end(search, outcome)
    return OneShotRun(outcome, space, data, evaluation, search.run_dir, seconds, events.plugin_faults)


def _components(
    spec: ExperimentSpec, registry: Registry, *, progress: bool, data: TensorData | None
) -> tuple[SearchSpace, OneShotStrategy, TensorData, Evaluator | None]:
    """The run's space, strategy, training data and evaluator, each refusal before anything
    is written: a strategy that takes no data when built is built first, so its options are
    refused before the data loads (which says it is loading when it takes a while), and the
    supernet it will build is tried last."""
    space = spec.build_space(registry)
    if not spec.is_one_shot(registry):
        raise NasforgeError(f"strategy '{spec.strategy}' is ask/tell; run it with an evaluator and a budget")
    cls = one_shot_strategy(registry, spec.strategy)
    space.require(cls.requires, by=f"strategy '{cls.name}'")
    strategy_options = dict(spec.strategy_options)

    def build_strategy(data: TensorData | None) -> OneShotStrategy:
        context = spec.context(registry, data=data, progress=progress)
        plugin = registry.origin("strategy", spec.strategy)
        return build_component("strategy", cls, context, strategy_options, plugin=plugin)

    early = None if "data" in context_fields_of("strategy", cls) else build_strategy(None)
    data = spec.load_train_data(registry, given=data)
    if data is None:
        raise NasforgeError(
            f"one-shot strategy '{spec.strategy}' needs data to train on: --train-data (e.g. digits)"
        )
    evaluator = None
    if spec.evaluator is not None:
        shared = data if spec.evaluator_uses_train_data(registry) else None
        evaluator = spec.build_evaluator(registry, space, data=shared)
        evaluator.preflight()
    strategy = early if early is not None else build_strategy(data)
    if SUPERNET in cls.requires:
        _preflight_supernet(space, data, strategy_options.get("supernet"))
    return space, strategy, data, evaluator


def _preflight_supernet(space: SearchSpace, data: TensorData, given: Any) -> None:
    """The supernet the strategy will build, tried before the run starts: a declared space
    runs it on one example; any other is built on the meta device (no memory, no random
    draws) when the user gave supernet options, so an option it refuses is refused now."""
    options = network_options(data.input_shape, data.num_classes, accepted=supernet_option_names(space))
    options.update(given if isinstance(given, dict) else {})
    preflight = getattr(space, "preflight_supernet", None)
    if preflight is not None:
        preflight(data.input_shape, options)
    elif isinstance(given, dict) and given:
        try:
            with torch.device("meta"):
                space.supernet(**options)
        except NasforgeError:
            raise
        except Exception:  # noqa: BLE001 - the meta device's own limits: the real build decides
            pass


def _start_journal(
    run_dir: Path,
    spec: ExperimentSpec,
    registry: Registry,
    space: SearchSpace,
    data: TensorData,
    evaluator: Any,
) -> JournalWriter:
    """A fresh journal for the run (an interrupted one's kept beside it), its header written."""
    path = journal_path(run_dir)
    if not is_unstarted(path):
        _check_same_run(path, spec, registry, data)
        path.rename(path.with_suffix(f".interrupted-{int(time.time())}.jsonl"))
    writer = JournalWriter(path)  # an unstarted file's torn header is cut first
    writer.header(
        {
            "spec": spec.to_json(),
            "mode": "one-shot",
            "space": space_header(space, spec.space),
            "data": data_record(data),
            "evaluator": evaluator.describe() if evaluator is not None else None,
            "objective": attrs.asdict(evaluator.objective) if evaluator is not None else None,
            "environment": describe_environment(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    )
    return writer


def _evaluated(outcome: SearchOutcome, evaluator: Any) -> tuple[SearchOutcome, Result | None]:
    """What the evaluator (if any) says of the best, and of every member of an ensemble (a
    table's valid and test accuracy) beside the supernet's scores: in the end record, the
    members table, --json and the export."""
    if evaluator is None:
        return outcome, None
    evaluation = evaluator.evaluate(outcome.best)
    if outcome.ensemble is not None:
        ensemble, _ = evaluate_members(outcome.ensemble, evaluator)
        outcome = attrs.evolve(outcome, ensemble=ensemble)
    return outcome, evaluation


def _ensemble_record(outcome: SearchOutcome, space: SearchSpace) -> dict[str, Any]:
    """The end record's ``ensemble`` (members, weights, combine rule, scores, the members'
    texts) for an outcome that holds one; nothing otherwise, so other runs' records stay as
    they were."""
    ensemble = outcome.ensemble
    if ensemble is None:
        return {}
    return {"ensemble": ensemble.to_json([space.format(g) for g in ensemble.members])}


def recorded_ensemble(end: dict[str, Any] | None, path: Any = None) -> Ensemble | None:
    """The ensemble a one-shot journal's end record holds (None for runs without one, and
    for journals written before ensembles were recorded); a damaged entry is a
    :class:`~nasforge.kernel.errors.JournalError` in one line."""
    data = (end or {}).get("ensemble")
    if data is None:
        return None
    try:
        return Ensemble.from_json(data)
    except NasforgeError as exc:
        where = f"{path}: " if path is not None else ""
        raise JournalError(f"{where}end record's ensemble: {exc}") from exc


def _describe(trial: Trial, shown: int = 3) -> str:
    """A trial's first few objectives, for a progress record."""
    items = list(trial.result.objectives.items())[:shown]
    return ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in items)


def _check_same_run(path: Path, spec: ExperimentSpec, registry: Registry, data: TensorData) -> None:
    header = JournalReader(path).header
    check_recorded_data(header.get("data"), data, path.parent)
    if spec_differences(header.get("spec"), spec, registry):
        recorded = (header.get("space") or {}).get("name")
        if recorded and recorded != spec.space:
            raise NasforgeError(f"journal in {path.parent} is from space '{recorded}', not '{spec.space}'")
        raise NasforgeError(
            f"journal in {path.parent} was made with different settings; use another run directory"
        )


def resume_one_shot(
    run_dir: str | os.PathLike[str], *, registry: Registry | None = None, **kwargs: Any
) -> OneShotRun:
    """Finish an interrupted one-shot run (restarted from its spec; see the module docstring).

    A finished run is only read: its outcome comes from the journal (an ensemble's
    members, weights and scores included), and no hook fires (nothing ran). ``kwargs``
    are :func:`run_one_shot`'s (progress, console, and ``data`` for a run on data given
    in memory; data that differs from the recorded digest is refused).
    """
    reader = JournalReader.of_run(run_dir)
    try:
        spec = ExperimentSpec.from_json(reader.header["spec"])
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{reader.path}: header holds no usable experiment spec ({exc})") from exc
    registry = registry if registry is not None else get_registry()
    if reader.end is None:
        return run_one_shot(spec, run_dir=run_dir, registry=registry, **kwargs)
    space = spec.build_space(registry)
    best = Genotype.from_json(reader.end["best"])
    space.validate(best)
    evaluation = reader.end.get("evaluation")
    ensemble = recorded_ensemble(reader.end, reader.path)
    if ensemble is not None:
        for g in ensemble.members:
            space.validate(g)
    outcome = SearchOutcome(
        best=best,
        best_result=reader.trials[-1].result if reader.trials else None,
        history=reader.trials,
        produced_by={"spec": spec.to_json()},
        members=ensemble.members if ensemble is not None else (),
        ensemble=ensemble,
    )
    data = spec.load_train_data(registry, given=kwargs.get("data"))
    if data is None:
        raise JournalError(f"{reader.path}: the recorded spec names no training data")
    check_recorded_data(reader.header.get("data"), data, Path(run_dir))
    result = Result.from_json(evaluation) if evaluation else None
    faults = recorded_faults(reader.end)
    outcome = with_faults(outcome, faults)
    return OneShotRun(outcome, space, data, result, Path(run_dir), 0.0, faults)

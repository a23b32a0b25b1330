"""The Python face of the main CLI tasks: one call per command, same defaults.

Each call takes the ``registry`` its components come from; without one it uses the
process-wide default (``nasforge.get_registry()``), chosen here, at the entry point, and
passed down to everything the run builds. Components a caller does not name are the core
defaults of :mod:`nasforge.run.defaults`; when the plugin supplying one is missing, the call
fails in one line saying so.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError, OptionError, show
from nasforge.kernel.objectives import Constraint
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Objective
from nasforge.kernel.search_space import SearchSpace, own_state
from nasforge.kernel.space_source import canonical, check_source, is_source, reference_of
from nasforge.run import defaults
from nasforge.run.budget import Budget
from nasforge.run.construction import context_fields_of
from nasforge.run.defaults import default_component
from nasforge.run.executors import DEFAULT_RETRIES, ExecutorOptions, check_executor_options
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader
from nasforge.run.one_shot_run import OneShotRun, resume_one_shot, run_one_shot
from nasforge.run.run_data import as_training_data, spec_name
from nasforge.run.run_events import EndCallback, RunEvents, TrialCallback
from nasforge.run.spec import ExperimentSpec
from nasforge.run.stop_rules import StopRule

_log = logging.getLogger(__name__)

DEFAULT_TRIALS = 100


def load_space(name: str, *, registry: Registry | None = None, **options: Any) -> SearchSpace:
    """The registered search space ``name`` (or one named by its code, ``PATH.py:NAME`` or
    ``package.module:NAME``), constructed with ``options``."""
    return (registry if registry is not None else get_registry()).space(name, **options)


def space_name(
    space: Any, registry: Registry, options: dict[str, Any] | None
) -> tuple[str | None, dict[str, Any]]:
    """How a run names ``space`` (and its options): a registered name as it is, a space's
    code with a file's path made absolute, and a space class or object handed over from
    Python as its code (:func:`~nasforge.kernel.space_source.reference_of`), or its
    registered name where the registry holds that very class. An object made with options
    cannot say which, so it must equal its class made with ``options``."""
    options = dict(options or {})
    if space is None or isinstance(space, str):
        return (canonical(space) if space is not None and is_source(space) else space), options
    cls = space if isinstance(space, type) else type(space)
    if not (isinstance(cls, type) and issubclass(cls, SearchSpace)):
        raise NasforgeError(f"space must be a name, a search space class or object, got {show(space)}")
    if not isinstance(space, type):
        options = options or space.space_options  # an object stands for its class and its options
        if not _same_object(space, cls, options):
            raise NasforgeError(
                f"space object {space!r} differs from {cls.__name__}(**space_options); a run rebuilds "
                "its space, so pass the class and its options as space_options"
            )
    named = getattr(cls, "name", None)
    if isinstance(named, str) and registry.has("space", named) and registry.get("space", named) is cls:
        return named, options
    return reference_of(cls), options


def _same_object(space: SearchSpace, cls: type, options: dict[str, Any]) -> bool:
    try:
        fresh = cls(**options)
        return bool(own_state(fresh) == own_state(space))  # however the options were spelt
    except Exception:
        return False


def build_spec(
    space: str | type[SearchSpace] | SearchSpace | None = None,
    strategy: str | None = None,
    evaluator: str | None = None,
    *,
    dataset: str | os.PathLike[str] | None = None,
    train_data: str | os.PathLike[str] | None = None,
    benchmark_dataset: str | None = None,
    device: str | None = None,
    trials: int | None = None,
    seconds: float | None = None,
    simulated_seconds: float | None = None,
    seed: int = 0,
    space_options: dict[str, Any] | None = None,
    strategy_options: dict[str, Any] | None = None,
    evaluator_options: dict[str, Any] | None = None,
    build_options: dict[str, Any] | None = None,
    executor: str = "inprocess",
    workers: int = 1,
    dedup: bool = True,
    objectives: Sequence[str | Objective] | None = None,
    constraints: Sequence[str | Constraint] | None = None,
    stop: Sequence[str | StopRule] | None = None,
    registry: Registry | None = None,
) -> ExperimentSpec:
    """A spec with the CLI's defaults filled in, for ask/tell and one-shot strategies.

    ``space`` is a registered name, a space named by its code (``PATH.py:NAME``,
    ``package.module:NAME``) or a space class or object (:func:`space_name`); the journal
    records a file's path and digest, and a resume refuses a file changed since.
    Unnamed components are the defaults of :mod:`nasforge.run.defaults` (space nb201,
    strategy rea, and for ask/tell the nb201-table evaluator on cifar10 with 100 trials
    unless a budget is given). ``train_data`` is what networks train on (a one-shot
    search, an evaluator that trains; default digits): a dataset name or the path of a
    tensor file or image folder (recorded absolute), ``benchmark_dataset`` the
    benchmark evaluator's dataset; ``dataset`` (``--dataset``) is one name for either,
    placed as the training data of a one-shot run or a training evaluator and as the
    benchmark dataset otherwise. ``device`` (cpu, cuda, cuda:N) is the spec's field, handed to every component
    that takes one (one-shot strategies, evaluators that train, strategies that score
    networks) through the run context. A one-shot search's length is a strategy option
    (``epochs``), so a budget is refused. ``build_options`` ({"C": 8}): every network's.

    ``objectives`` (``"NAME:max"``, ``"NAME:min"`` or :class:`~nasforge.Objective`) are what
    an ask/tell run optimises, the evaluator's own objective when none are given; two or
    more need a multi-objective strategy and the run returns a Pareto front.
    ``constraints`` (``"NAME<=VALUE"``, ``"NAME>=VALUE"`` or :class:`~nasforge.Constraint`)
    bound what may become the best. Both are refused for one-shot strategies.
    ``stop`` are rules that end an ask/tell run early, any one of which stops it
    (``"valid_accuracy>=93"``, ``"time:600"``, ``"plateau:20"`` or the classes of
    :mod:`nasforge.run.stop_rules`); the journal records them, so a resume obeys them too.
    """
    registry = registry if registry is not None else get_registry()
    space, space_options = space_name(space, registry, space_options)
    space = space or default_component(registry, "space", defaults.SPACE)
    strategy = strategy or defaults.default_strategy(registry)
    check_names(registry, space=space, strategy=strategy, evaluator=evaluator)
    spec = ExperimentSpec(
        space=space,
        strategy=strategy,
        evaluator=evaluator,
        budget=None,
        seed=seed,
        space_options=space_options or {},
        strategy_options=strategy_options or {},
        evaluator_options=evaluator_options or {},
        build_options=build_options or {},
        executor=executor,
        workers=workers,
        dedup=dedup,
        train_data=train_data,
        benchmark_dataset=benchmark_dataset,
        objectives=objectives,
        constraints=constraints,
        stop=stop,
    )
    has_budget = trials is not None or seconds is not None or simulated_seconds is not None
    if spec.is_one_shot(registry):
        _refuse_ask_tell_settings(spec, has_budget)
        spec = _with_default_data(_placed(spec, dataset, registry), registry)
        return _checked(_with_device(spec, device, registry), registry)
    if evaluator is None:
        chosen = defaults.default_evaluator(registry, spec.space)
        if chosen != defaults.TABLE_EVALUATOR:
            _log.info(
                "no --evaluator: '%s' cannot serve space '%s', so each candidate is trained briefly by '%s'",
                defaults.TABLE_EVALUATOR,
                spec.space,
                chosen,
            )
        spec = attrs.evolve(spec, evaluator=chosen)
    if not has_budget:
        trials = DEFAULT_TRIALS
    spec = attrs.evolve(
        spec, budget=Budget(trials=trials, seconds=seconds, simulated_seconds=simulated_seconds)
    )
    spec.check_strategy_goal(registry)  # before the evaluator is built: a plain refusal comes first
    return _checked(
        _with_device(_with_default_data(_placed(spec, dataset, registry), registry), device, registry),
        registry,
    )


#: A component's name as the registry knows it; anything else (a path, ``FILE.py:NAME``) is
#: resolved by whoever reads it, not checked here.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_names(registry: Registry, **named: str | None) -> None:
    """Each component named by ``kind=name`` (space, strategy, evaluator, metric, dataset)
    is one the registry has: an unknown or misspelt name is refused, with a suggestion,
    before anything is announced, read or built (``--space nb210`` once trained digits first)."""
    for kind, name in named.items():
        if name is not None and _PLAIN_NAME.fullmatch(name) and not name.endswith(".py"):
            registry.get(kind, name)


def _refuse_ask_tell_settings(spec: ExperimentSpec, has_budget: bool) -> None:
    """A one-shot search's length is its strategy's option; budgets, objectives,
    constraints and stop rules belong to ask/tell runs, so each is refused in one line."""
    what = (
        "set its length with -o epochs=N, not a budget"
        if has_budget
        else "objectives and constraints apply to ask/tell strategies"
        if spec.objectives or spec.constraints
        else "stop rules apply to ask/tell strategies"
        if spec.stop
        else None
    )
    if what is not None:
        raise NasforgeError(f"'{spec.strategy}' is one-shot: {what}")


def _placed(
    spec: ExperimentSpec, dataset: str | os.PathLike[str] | None, registry: Registry
) -> ExperimentSpec:
    """``spec`` with the one ``dataset`` (``--dataset``) in the field it means: the training
    data of a one-shot run or of an evaluator that trains, else the benchmark dataset. The
    same name given twice, differently, is refused."""
    if dataset is None:
        return spec
    dataset = os.fspath(dataset)
    field = (
        "train_data" if spec.is_one_shot(registry) or spec.evaluator_trains(registry) else "benchmark_dataset"
    )
    given = getattr(spec, field)
    if given is not None and given != dataset:
        flag = field.replace("_", "-")
        raise NasforgeError(f"--dataset {dataset} and --{flag} {given} disagree; give one of them")
    placed: dict[str, Any] = {field: dataset}
    return attrs.evolve(spec, **placed)


def _with_default_data(spec: ExperimentSpec, registry: Registry) -> ExperimentSpec:
    """The default datasets of :mod:`nasforge.run.defaults` where the spec names none:
    training data for a one-shot search or a training evaluator; the table's dataset for
    the default table evaluator (another evaluator keeps its own default). Training data
    named by a relative path is recorded absolute, so a resume elsewhere finds it."""
    if spec.train_data is not None:
        spec = attrs.evolve(spec, train_data=spec_name(spec.train_data, registry))
    if spec.train_data is None and (spec.is_one_shot(registry) or spec.evaluator_trains(registry)):
        return attrs.evolve(spec, train_data=defaults.TRAINING_DATASET)
    if (
        spec.evaluator == defaults.TABLE_EVALUATOR
        and not spec.is_one_shot(registry)
        and spec.benchmark_dataset is None
        and "dataset" not in spec.evaluator_options
    ):
        return attrs.evolve(spec, benchmark_dataset=defaults.TABLE_DATASET)
    return spec


def _checked(spec: ExperimentSpec, registry: Registry) -> ExperimentSpec:
    """``spec``, once its evaluator's dataset is known not to be named twice differently."""
    if spec.evaluator is not None:
        spec.evaluator_dataset(registry)
    return spec


def _with_device(spec: ExperimentSpec, device: str | None, registry: Registry) -> ExperimentSpec:
    """``device`` as the spec's own field, which the run context hands every component that
    declares the context field ``device``. An unavailable CUDA device, a run none of whose
    components takes a device, and a component option that names another device are each
    refused here, in one line, before anything is built."""
    if device is None:
        return spec
    try:
        resolve_device(device)
    except (ValueError, RuntimeError) as exc:
        raise OptionError(f"--device {device}: {exc}") from exc
    named = [("strategy", spec.strategy, spec.strategy_options)]
    if spec.evaluator is not None:
        named.append(("evaluator", spec.evaluator, spec.evaluator_options))
    takers = [
        (kind, name, options)
        for kind, name, options in named
        if "device" in context_fields_of(kind, registry.get(kind, name))
    ]
    if not takers:
        who = " and ".join(f"{kind} '{name}'" for kind, name, _ in named)
        raise OptionError(
            f"--device {device}: {who} take no device (it applies to one-shot strategies, evaluators "
            "that train and strategies that score networks)"
        )
    for kind, _, options in takers:
        if options.get("device", device) != device:
            raise OptionError(f"--device {device} and the {kind} option device={options['device']} disagree")
    return attrs.evolve(spec, device=device)


def search(
    space: str | type[SearchSpace] | SearchSpace | None = None,
    strategy: str | None = None,
    evaluator: str | None = None,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    registry: Registry | None = None,
    asynchronous: bool = False,
    executor_options: dict[str, Any] | None = None,
    retries: int = DEFAULT_RETRIES,
    on_trial: TrialCallback | None = None,
    on_end: EndCallback | None = None,
    hooks: Sequence[object] = (),
    **spec_options: Any,
) -> SearchOutcome:
    """Run a journaled search (the Python twin of ``nasforge search``).

    ``spec_options`` are those of :func:`build_spec` (train_data, benchmark_dataset,
    trials, seed, device, objectives, constraints, stop, ...). With ``run_dir`` every trial
    is journaled and an interrupted run continues with :func:`resume`. Every component comes from
    ``registry`` (default: the process-wide one).

    A host program follows the run with ``on_trial(trial)``, called once for each new
    trial as it is journaled, and ``on_end(outcome)``, called once when the run ends;
    ``hooks`` are objects whose methods implement the event hooks
    (``@nasforge.hookimpl def nasforge_trial_end(self, experiment, trial)``,
    ``nasforge_should_stop``, ``nasforge_search_end``) for this run alone, without a
    registry of their own (:mod:`nasforge.run.run_events`). The run's start and end are
    logged at INFO under ``nasforge.run``.

    ``train_data`` also takes data in memory: a :class:`~nasforge.TensorData`, ``(x, y)``
    arrays or tensors, or a mapping with ``x``, ``y`` (optional ``x_test``, ``y_test``,
    ``num_classes``), checked as a data file is; the journal records its digest, and
    :func:`resume` needs the same data again (``train_data=``).

    With several objectives the outcome's ``front`` holds the Pareto front (trials, best
    first) and ``members`` its genotypes; ``best`` is the front member best on the first
    objective. An ensemble search (e.g. ``nesbs``) returns its ensemble in ``ensemble``
    (a :class:`~nasforge.Ensemble`: members, weights, combine rule, per-member scores) and
    its genotypes in ``members``; :func:`nasforge.tools.export.export_ensemble` writes it as
    ``nasforge search --export`` does, and :func:`resume` of the ended run gives it back.

    Where trials run (ask/tell runs): ``executor_options`` are the executor's own options
    (``executor="ray"`` with ``{"address": "HOST:PORT"}`` joins an existing Ray cluster;
    what an executor takes is listed by ``nasforge executors``). ``retries``: how often a
    trial whose worker died (process pool or a cluster) is run again before it counts as
    failed (recorded in ``metadata["retries"]``).
    ``asynchronous`` keeps ``workers`` trials in flight and tells each result as it
    arrives, instead of rounds that wait for their slowest trial; the journal keeps the
    order results were told, so a resume replays it exactly, but which result arrives
    first depends on the machines, so two asynchronous runs may differ (the default,
    synchronous rounds, gives the same run whatever executor runs it).

    Raises :class:`~nasforge.kernel.errors.SearchFailedError` when every trial failed (there is
    no best to return), :class:`~nasforge.kernel.errors.InfeasibleSearchError` (a subclass) when
    no trial satisfied the constraints, :class:`~nasforge.kernel.errors.CapabilityError` when the evaluator
    cannot serve the space (before any trial), and
    :class:`~nasforge.kernel.errors.RunInUseError` when another process writes ``run_dir``.
    """
    registry = registry if registry is not None else get_registry()
    spec_options["train_data"], data = as_training_data(spec_options.get("train_data"))
    spec = build_spec(space, strategy, evaluator, registry=registry, **spec_options)
    run = run_spec(
        spec,
        run_dir=run_dir,
        registry=registry,
        progress=progress,
        asynchronous=asynchronous,
        executor_options=dict(executor_options or {}),
        retries=retries,
        data=data,
        events=RunEvents(registry, hooks=hooks, on_trial=on_trial, on_end=on_end),
        defaulted=("strategy",) if strategy is None else (),
    )
    return _outcome(run)


def run_spec(
    spec: ExperimentSpec,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
    progress: bool = False,
    console: Console | None = None,
    asynchronous: bool = False,
    executor_options: dict[str, Any] | None = None,
    retries: int = DEFAULT_RETRIES,
    data: TensorData | None = None,
    events: RunEvents | None = None,
    defaulted: tuple[str, ...] = (),
) -> Experiment | OneShotRun:
    """Run ``spec`` (as :func:`build_spec` makes it) to its end, and return the run itself
    (the :class:`~nasforge.run.experiment.Experiment` of an ask/tell run, the
    :class:`~nasforge.run.one_shot_run.OneShotRun` of a one-shot one): what :func:`search`
    and ``nasforge search`` both run, so each refusal is made here, once. ``console``: where
    progress is drawn (stderr by default). ``defaulted``: the components the caller did not
    name (``("strategy",)``), which the journal records so a summary can say so."""
    registry = registry if registry is not None else get_registry()
    options = ExecutorOptions(retries=retries, options=executor_options or {})
    if spec.is_one_shot(registry):
        if asynchronous or options != ExecutorOptions():
            raise NasforgeError(one_shot_refusal(spec.strategy))
        return run_one_shot(
            spec,
            run_dir=run_dir,
            registry=registry,
            progress=progress,
            console=console,
            data=data,
            events=events,
        )
    check_executor_options(registry.get("executor", spec.executor), options, registry)
    experiment = Experiment.from_spec(
        spec,
        run_dir=run_dir,
        registry=registry,
        progress=progress,
        console=console,
        executor_options=options,
        asynchronous=asynchronous,
        data=data,
        events=events,
        defaults=defaulted,
    )
    experiment.run()
    return experiment


def one_shot_refusal(strategy: str) -> str:
    """The one message for executor settings given to a one-shot search or its resume."""
    return (
        f"'{strategy}' is one-shot: it has no executor, so executor options, retries and "
        "asynchronous evaluation apply to ask/tell strategies only"
    )


def resume(
    run_dir: str | os.PathLike[str],
    *,
    progress: bool = False,
    registry: Registry | None = None,
    executor_options: dict[str, Any] | None = None,
    retries: int = DEFAULT_RETRIES,
    train_data: Any = None,
    on_trial: TrialCallback | None = None,
    on_end: EndCallback | None = None,
    hooks: Sequence[object] = (),
) -> SearchOutcome:
    """Continue (or, if it ended, re-read) the journaled run in ``run_dir``.

    ``train_data``: the data a run given data in memory trained on (as :func:`search`
    took it), which must have the digest the journal recorded; runs on a dataset or a
    file load theirs again (and are refused if it changed).

    An ask/tell run continues on the executor and workers its spec names, evaluated as
    it was (synchronously or asynchronously); ``executor_options`` and ``retries`` are as in
    :func:`search` (where it runs is not part of the run, so a run may continue on another
    cluster); a one-shot run, which has no executor, refuses them.

    ``on_trial``, ``on_end`` and ``hooks`` are as in :func:`search`: ``on_trial`` sees
    each new trial once (none of those the journal replays), and ``on_end`` is called
    when the run ends now (not when an ended run is merely read again).

    A run that ended is only read (nothing is opened for writing, so read-only media
    work); one that did not takes the run directory's lock, and is refused with
    :class:`~nasforge.kernel.errors.RunInUseError` while another process writes it.
    """
    registry = registry if registry is not None else get_registry()
    options = dict(executor_options or {})
    _, data = as_training_data(train_data)
    run = resume_run(
        run_dir,
        registry=registry,
        progress=progress,
        executor_options=options,
        retries=retries,
        data=data,
        events=RunEvents(registry, hooks=hooks, on_trial=on_trial, on_end=on_end),
    )
    return _outcome(run)


def resume_run(
    run_dir: str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    progress: bool = False,
    console: Console | None = None,
    executor_options: dict[str, Any] | None = None,
    retries: int = DEFAULT_RETRIES,
    data: TensorData | None = None,
    events: RunEvents | None = None,
) -> Experiment | OneShotRun:
    """Continue (or re-read) the run in ``run_dir`` and return the run itself: what
    :func:`resume` and ``nasforge resume`` both run (see :func:`run_spec`)."""
    registry = registry if registry is not None else get_registry()
    options = ExecutorOptions(retries=retries, options=executor_options or {})
    header = JournalReader.of_run(run_dir).header
    check_source(header.get("space"), run_dir=run_dir)  # before anything is opened for writing
    if header.get("mode") == "one-shot":
        if options != ExecutorOptions():
            raise NasforgeError(one_shot_refusal(str((header.get("spec") or {}).get("strategy", "?"))))
        return resume_one_shot(
            run_dir, registry=registry, progress=progress, console=console, data=data, events=events
        )
    spec_executor = (header.get("spec") or {}).get("executor", "inprocess")
    check_executor_options(registry.get("executor", spec_executor), options, registry)
    experiment = Experiment.resume(
        run_dir,
        registry=registry,
        progress=progress,
        console=console,
        executor_options=options,
        data=data,
        events=events,
    )
    experiment.run()
    return experiment


def _outcome(run: Experiment | OneShotRun) -> SearchOutcome:
    outcome = run.outcome
    if outcome is None:  # an Experiment that ran has one; a guard for type checkers
        raise NasforgeError("the run ended without an outcome")
    return outcome

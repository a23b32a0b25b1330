"""Run a strategy against an evaluator under a budget, journaled and resumable.

Resume works by replay (PyGlove's recover): the strategy is rebuilt with the same seed,
and every ask is answered from the journal until the journal runs out, after which new
evaluations begin. A deterministic strategy therefore continues exactly where it was
killed; if it asks for something other than what the journal recorded, the run refuses
to continue instead of silently mixing two searches.

:class:`Experiment` is the run's face; the loop and its parts do the work, each in its own
module: asking without repeats (:mod:`~nasforge.run.asking`), the per-trial record and the
budget (:mod:`~nasforge.run.loop`), rounds or trials in flight
(:mod:`~nasforge.run.rounds`, :mod:`~nasforge.run.in_flight`), the journal and its replay
(:mod:`~nasforge.run.run_directory`, :mod:`~nasforge.run.replay`), stop rules
(:mod:`~nasforge.run.stop_judge`), progress (:mod:`~nasforge.run.run_progress`) and the
outcome (:mod:`~nasforge.run.run_end`).

The run's :class:`~nasforge.kernel.objectives.SearchGoal` (its objectives and constraints,
from the spec) picks the best: an infeasible trial never becomes it. A run may stop before
its budget is spent, by the spec's stop rules or by a plugin's ``nasforge_should_stop``
hook; its end record, and the outcome's ``produced_by["stopped"]``, say which rule stopped
it, why and after which trial. Evaluation is synchronous by default (rounds of ``workers``
asks, the same run whatever executor runs it); ``asynchronous=True`` keeps ``workers``
trials in flight instead, and the journal header records the mode, which a resume keeps.
"""

from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import max_fidelity
from nasforge.kernel.objectives import SearchGoal, as_goal
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.space_source import space_header
from nasforge.kernel.strategy import Strategy
from nasforge.run.defaults import DEFAULTS_KEY, strategy_default_note
from nasforge.run.environment import describe_environment
from nasforge.run.executors import Executor, ExecutorOptions, InProcessExecutor
from nasforge.run.fidelity_spent import at_full, fidelity_spent, trial_spent
from nasforge.run.goal_checks import declared_objectives
from nasforge.run.in_flight import run_in_flight
from nasforge.run.journal_file import JournalReader
from nasforge.run.loop import RunLoop
from nasforge.run.plugin_faults import PluginFault
from nasforge.run.replay import (
    ASYNCHRONOUS,
    EVALUATION_KEY,
    Replay,
    RunIdentity,
    journal_is_asynchronous,
    load_replay,
)
from nasforge.run.rounds import run_rounds
from nasforge.run.run_data import data_record
from nasforge.run.run_directory import RunJournal
from nasforge.run.run_end import end_record, outcome_of, with_faults
from nasforge.run.run_events import RunEvents, log_end, log_start
from nasforge.run.run_progress import RunProgress
from nasforge.run.spec import ExperimentSpec
from nasforge.run.stop_rules import check_rules, parse_rule, rule_texts
from nasforge.run.trial_failures import TrialFailures, trial_failures

logger = logging.getLogger("nasforge.experiment")


class Experiment:
    """One search run. Build it from a spec (``from_spec``) or from instances.

    ``registry`` is where the run's components came from and whose event hooks
    (``nasforge_trial_end``, ``nasforge_search_end``) it calls; an Experiment built from
    instances without one uses the process-wide default, so loggers see every run.

    ``stop`` adds stop rules (text such as ``"valid_accuracy>=93"`` or the rules of
    :mod:`nasforge.run.stop_rules`) to the spec's: they are recorded with it in the journal,
    so a resume obeys them too. ``stopped`` says, once the run ends, whether one stopped it.

    ``asynchronous`` keeps ``workers`` trials in flight and tells each result as it
    arrives (:mod:`nasforge.run.in_flight`); None: as the run's journal was run, else
    synchronous rounds.

    ``data`` is the training data the evaluator trains on (``from_spec`` passes it): the
    journal header records its digest and a resume on other data is refused.

    ``events`` (:class:`~nasforge.run.run_events.RunEvents`) is where the run's events go:
    by default the registry's plugins; ``from_spec`` and :func:`nasforge.api.search` add a
    host program's hook objects and callbacks. The start and the end of the run are
    logged at INFO under ``nasforge.run``.
    """

    def __init__(
        self,
        space: SearchSpace,
        strategy: Strategy,
        evaluator: Evaluator,
        spec: ExperimentSpec,
        *,
        executor: Executor | None = None,
        run_dir: str | os.PathLike[str] | None = None,
        registry: Registry | None = None,
        progress: bool = True,
        console: Console | None = None,
        stop: Any = None,
        asynchronous: bool | None = None,
        data: TensorData | None = None,
        events: RunEvents | None = None,
        defaults: tuple[str, ...] = (),
    ) -> None:
        evaluator.preflight()  # an evaluator that cannot serve the space is refused before any trial
        if stop:  # recorded in the spec (and so the journal): a resume obeys the same rules
            spec = attrs.evolve(spec, stop=(*spec.stop, *rule_texts(stop)))
        self.space, self.strategy, self.evaluator, self.spec = space, strategy, evaluator, spec
        self.executor = executor or InProcessExecutor()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        if asynchronous is None:
            asynchronous = self.run_dir is not None and journal_is_asynchronous(self.run_dir)
        #: Whether trials are told as they finish rather than in rounds.
        self.asynchronous = bool(asynchronous)
        self.registry = registry if registry is not None else get_registry()
        self.events = events if events is not None else RunEvents(self.registry)
        self.progress = progress
        self.console = console or Console(stderr=True)
        self.trials: list[Trial] = []
        self.outcome: SearchOutcome | None = None
        #: What the run optimises and obeys (the spec's objectives and constraints).
        self.goal: SearchGoal = spec.goal(evaluator)
        _check_strategy_goal(strategy, self.goal)
        _warn_if_selecting_on_reported(evaluator, self.goal)
        self.stop_rules = tuple(parse_rule(text) for text in spec.stop)
        declared = declared_objectives(evaluator)
        check_rules(self.stop_rules, self.goal, None if declared is None else list(declared))
        #: Why the run stopped before its budget ran out: {"rule", "reason", "trial"}, else None.
        self.stopped: dict[str, Any] | None = None
        #: The plugins whose event hooks raised in this run (the run went on without them).
        self.plugin_faults: list[PluginFault] = []
        self._loop: RunLoop | None = None
        self.data = data
        #: The components the caller did not name, chosen as defaults (``("strategy",)``):
        #: the journal header records them, so a summary can say so.
        self.defaults = tuple(defaults)

    # --- construction -----------------------------------------------------------------
    @classmethod
    def from_spec(
        cls,
        spec: ExperimentSpec,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        registry: Registry | None = None,
        executor_options: ExecutorOptions | None = None,
        data: TensorData | None = None,
        events: RunEvents | None = None,
        **kwargs: Any,
    ) -> Experiment:
        """The run ``spec`` describes. ``executor_options`` say where its executor runs
        trials (a cluster executor's own options, retries of a trial whose worker died):
        not part of the spec, since they do not change what a trial computes, so a run may
        resume elsewhere. ``data``: training data the caller holds in memory (the spec
        names it ``memory:NAME``); other data is loaded by name or path."""
        registry = registry if registry is not None else get_registry()
        if spec.evaluator_uses_train_data(registry):
            data = spec.load_train_data(registry, given=data)
        else:
            data = None
        space, evaluator, strategy, executor = spec.build(registry, executor_options, data=data)
        return cls(
            space,
            strategy,
            evaluator,
            spec,
            executor=executor,
            run_dir=run_dir,
            registry=registry,
            data=data,
            events=events,
            **kwargs,
        )

    @classmethod
    def resume(
        cls, run_dir: str | os.PathLike[str], *, registry: Registry | None = None, **kwargs: Any
    ) -> Experiment:
        """Rebuild a run from its journal header (its stop rules and its synchronous or
        asynchronous evaluation too); ``run()`` then continues it. ``kwargs`` are those of
        :meth:`from_spec` (e.g. ``executor_options`` to continue on another cluster)."""
        reader = JournalReader.of_run(run_dir)
        try:
            spec = ExperimentSpec.from_json(reader.header["spec"])
        except (KeyError, TypeError) as exc:
            raise JournalError(f"{reader.path}: header holds no usable experiment spec ({exc})") from exc
        kwargs.setdefault("asynchronous", reader.header.get(EVALUATION_KEY) == ASYNCHRONOUS)
        recorded = reader.header.get(DEFAULTS_KEY)
        kwargs.setdefault("defaults", tuple(recorded) if isinstance(recorded, list) else ())
        return cls.from_spec(spec, run_dir=run_dir, registry=registry, **kwargs)

    # --- running ----------------------------------------------------------------------
    def run(self) -> SearchOutcome:
        """Search until the budget is spent; returns (and stores) the outcome.

        Raises :class:`~nasforge.kernel.errors.RunInUseError` when another process writes
        the run directory, and :class:`~nasforge.kernel.errors.SearchFailedError` when
        every trial failed (the journal keeps them; no end record is written).
        """
        if self.spec.budget is None:  # one-shot specs have none; an ask/tell run never ends without
            raise NasforgeError(f"strategy '{self.spec.strategy}' needs a budget")
        journal = RunJournal(self.run_dir, self.console)
        self.stopped = None
        what = f"{self.spec.strategy} on {self.space.name}"
        started = time.perf_counter()
        try:
            replay = journal.open(self._load_replay, self._header)
            if "strategy" in self.defaults and not replay.exists:
                logger.info("no strategy named: searching with %s", strategy_default_note(self.spec.strategy))
            if not replay.ended:
                log_start(
                    what,
                    seed=self.spec.seed,
                    evaluator=self.evaluator.name,
                    budget=_budget_text(self.spec.budget.to_json()) if self.spec.budget is not None else None,
                    replayed=len(replay.trials) or None,
                    run_dir=self.run_dir,
                )
            objective = self.evaluator.objective.name
            with RunProgress(
                what,
                self.spec.budget.trials,
                objective,
                show=self.progress,
                console=self.console,
                intro=None
                if replay.ended
                else _intro(self.spec.budget.trials, self.evaluator, len(replay.trials)),
                workers=self.spec.workers,
            ) as progress:
                self._loop = loop = RunLoop(self, replay, journal, progress)
                (run_in_flight if self.asynchronous else run_rounds)(loop)
            progress.finish(len(self.trials), self.best_value())
            if replay.ended:
                self.stopped = replay.stopped
            full = [t for t in self.trials if at_full(t, max_fidelity(self.evaluator))] or self.trials
            outcome = outcome_of(self, loop.best, full)
            if replay.ended:
                self.plugin_faults = replay.plugin_faults
            else:  # the plugins hear of the end first, so the end record keeps their faults
                self.events.plugins_search_end(self, outcome)
                self.plugin_faults = self.events.plugin_faults
            outcome = with_faults(outcome, self.plugin_faults)
            record = end_record(self, outcome)
            if loop.asker.ended is not None:  # why it ended before its budget, in words
                record["ended"] = loop.asker.ended
            journal.end(record)
        finally:
            self.executor.close()  # also when refused or failed: no pool is left behind
            journal.close(told_any=bool(self.trials))
        self.outcome = outcome
        if replay.ended:  # read again, not run: its end was announced when it ended
            logger.debug("the run in %s had ended; read its %d trials", self.run_dir, len(self.trials))
            return outcome
        failures = self.failures()
        if failures is not None:  # the run went on past them; its user must still hear of them
            logger.warning("%s: %s", what, failures.line())
        log_end(what, outcome, time.perf_counter() - started, run_dir=self.run_dir)
        self.events.search_end(self, outcome)
        return outcome

    def _load_replay(self) -> Replay:
        assert self.run_dir is not None
        identity = RunIdentity(
            self.run_dir, self.space, self.spec, self.registry, self.evaluator, self.asynchronous, self.data
        )
        return load_replay(identity)

    def _header(self) -> dict[str, Any]:
        mode = {EVALUATION_KEY: ASYNCHRONOUS} if self.asynchronous else {}
        return {
            **mode,
            "spec": self.spec.to_json(),
            "space": space_header(self.space, self.spec.space),
            "evaluator": self.evaluator.describe(),
            "objective": attrs.asdict(self.evaluator.objective),
            "goal": self.goal.to_json(),
            "reported": self.evaluator.reported,
            **({} if self.data is None else {"data": data_record(self.data)}),
            **({DEFAULTS_KEY: list(self.defaults)} if self.defaults else {}),
            "environment": describe_environment(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    # --- reading ----------------------------------------------------------------------
    def best_so_far(self) -> Trial | None:
        """The best finished feasible trial (kept up to date as trials finish, not
        recomputed); None while no trial is feasible."""
        best = self._loop.best if self._loop is not None else None
        return best if best is not None and self.goal.feasible(best.result) else None

    def failures(self) -> TrialFailures | None:
        """How many of the run's trials failed, and the first (None when none did)."""
        return trial_failures(self.trials, self.space.format)

    def best_value(self) -> float:
        """The best so far on the evaluator's objective (NaN while there is none)."""
        best = self.best_so_far()
        return best.result.objectives.get(self.evaluator.objective.name, math.nan) if best else math.nan

    def fidelity_spent(self) -> int | None:
        """The budget the run's trials spent, in the evaluator's fidelity unit (short-train:
        training epochs), a full evaluation counting the full budget; None when the
        evaluator declares no fidelity (:func:`nasforge.run.fidelity_spent.fidelity_spent`)."""
        return fidelity_spent((trial_spent(t, self.evaluator) for t in self.trials), self.evaluator)


def _intro(trials: int | None, evaluator: Evaluator, replayed: int) -> str | None:
    """What a run is about to do, in a line: its trials and what each costs (an evaluator
    that trains says its epochs and examples); None when there is no trial budget."""
    if trials is None:
        return None
    facts = evaluator.describe()
    each = f"each evaluated by {evaluator.name}"
    epochs, examples = facts.get("epochs"), facts.get("train")
    if isinstance(epochs, int) and isinstance(examples, int):
        plural = "s" if epochs != 1 else ""
        each = f"each trained {epochs} epoch{plural} on {examples:,} examples by {evaluator.name}"
    done = f" ({replayed} done before)" if replayed else ""
    return f"{trials} trial{'s' if trials != 1 else ''}{done}, {each}"


def _budget_text(budget: dict[str, Any]) -> str:
    """A budget as a start record names it (``100 trials``, ``60 seconds``)."""
    words = {"trials": "trials", "seconds": "seconds", "simulated_seconds": "simulated seconds"}
    return " or ".join(f"{value:g} {words[key]}" for key, value in budget.items() if value is not None)


def _check_strategy_goal(strategy: Strategy, goal: SearchGoal) -> None:
    """The strategy must search the goal the journal records, or a resume (which builds
    it from the spec) would search another one."""
    objective = getattr(strategy, "objective", None)
    if objective is None:
        return
    theirs = as_goal(objective)
    if (theirs.objectives, theirs.constraints) != (goal.objectives, goal.constraints):
        raise NasforgeError(
            f"strategy '{strategy.name}' was built to search {theirs.describe()}, but the "
            f"spec names {goal.describe()}; build it with objective=spec.goal(evaluator)"
        )


def _warn_if_selecting_on_reported(evaluator: Evaluator, goal: SearchGoal) -> None:
    """The protocol: a run selects on one number and reports another (test accuracy);
    optimising the reported one measures the search on what it was tuned on."""
    reported = evaluator.reported
    names = [o.name for o in goal.objectives]
    if reported != evaluator.objective.name and reported in names:
        logger.warning(
            "the run optimises '%s', the number evaluator '%s' reports for the chosen "
            "architecture, so that number is measured on what the search selected on "
            "(optimistic; the benchmark protocol optimises '%s')",
            reported,
            evaluator.name,
            evaluator.objective.name,
        )

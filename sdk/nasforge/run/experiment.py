"""Run a strategy against an evaluator under a budget, journaled and resumable.

Resume works by replay (PyGlove's recover): the strategy is rebuilt with the same seed,
and every ask is answered from the journal until the journal runs out, after which new
evaluations begin. A deterministic strategy therefore continues exactly where it was
killed; if it asks for something other than what the journal recorded, the run refuses
to continue instead of silently mixing two searches.

Only one process writes a run directory at a time (:mod:`nasforge.run.run_lock`); a run
whose journal has ended is only read, so it can be re-read from read-only media. A run
in which every trial failed has no best architecture and ends in
:class:`~nasforge.kernel.errors.SearchFailedError`, not in a report of success.

The run's :class:`~nasforge.kernel.objectives.SearchGoal` (its objectives and constraints, from
the spec) picks the best: an infeasible trial never becomes it, and a run in which no
trial was feasible ends in :class:`~nasforge.kernel.errors.InfeasibleSearchError`. A run of
several objectives also ends with its Pareto front (``SearchOutcome.front``), computed
from every trial it evaluated, so every strategy's run, and its resume, has the same one.

A run may stop before its budget is spent: by the spec's stop rules
(:mod:`nasforge.run.stopping`, checked after every trial, replayed ones too, so a resume
stops where the run would have) or by a plugin's ``nasforge_should_stop`` hook (asked
after every new trial). A stopped run ends like any other; its end record, and the
outcome's ``produced_by["stopped"]``, say which rule stopped it, why and after which trial.

Evaluation is synchronous by default: rounds of ``workers`` asks, each round evaluated
as a batch and told in ask order, so a run is the same whatever executor runs it (and
its journal too). An *asynchronous* run (``asynchronous=True``; ``nasforge search
--async``) keeps ``workers`` trials in flight instead and, as each finishes, tells the
strategy its result and asks the next, so no worker waits for a batch's slowest trial
and a strategy that learns from each result (regularized evolution, hyperband, BO)
learns sooner. Which result arrives first depends on the machines, so such a run is not
reproducible from its seed alone: the journal records each trial in the order it was
told and the number of the ask it answers, and a resume replays the tells in exactly
that order between exactly those asks, so the strategy stands where it stood. The
journal header records the mode, and a resume keeps it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nasforge.kernel.errors import (
    CapabilityError,
    InfeasibleSearchError,
    InvalidGenotypeError,
    JournalError,
    NasforgeError,
    SearchFailedError,
)
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import (
    Ask,
    Proposal,
    at_full,
    fidelity_spent,
    max_fidelity,
    split,
    trial_spent,
)
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.objectives import SearchGoal, as_goal, check_measured, declared_objectives
from nasforge.kernel.progress_log import ProgressLog, bar_is_live
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Result, SearchOutcome, Trial, best_trial
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.run.environment import describe_environment
from nasforge.run.executors import Executor, ExecutorOptions, InProcessExecutor
from nasforge.run.journal import ASKED_KEY, JournalReader, JournalWriter, is_unstarted, journal_path
from nasforge.run.run_lock import RunLock
from nasforge.run.spec import ExperimentSpec, spec_differences
from nasforge.run.stopping import StopContext, check_rules, first_stop, parse_rule, rule_texts

logger = logging.getLogger("nasforge.experiment")

#: Consecutive already-seen asks after which a dedup'd search is declared exhausted.
MAX_DUPLICATE_ASKS = 10_000
#: Journal header key (and its value) of an asynchronous run.
EVALUATION_KEY, ASYNCHRONOUS = "evaluation", "asynchronous"


class Experiment:
    """One search run. Build it from a spec (``from_spec``) or from instances.

    ``registry`` is where the run's components came from and whose event hooks
    (``nasforge_trial_end``, ``nasforge_search_end``) it calls; an Experiment built from
    instances without one uses the process-wide default, so loggers see every run.

    ``stop`` adds stop rules (text such as ``"valid_accuracy>=93"`` or the rules of
    :mod:`nasforge.run.stopping`) to the spec's: they are recorded with it in the journal, so
    a resume obeys them too. ``stopped`` says, once the run ends, whether one stopped it.

    ``asynchronous`` keeps ``workers`` trials in flight and tells each result as it
    arrives (see the module's docstring); None: as the run's journal was run, else
    synchronous rounds.
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
    ) -> None:
        evaluator.preflight()  # an evaluator that cannot serve the space is refused before any trial
        if stop:  # recorded in the spec (and so the journal): a resume obeys the same rules
            spec = attrs.evolve(spec, stop=(*spec.stop, *rule_texts(stop)))
        self.space, self.strategy, self.evaluator, self.spec = space, strategy, evaluator, spec
        self.executor = executor or InProcessExecutor()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        if asynchronous is None:
            asynchronous = self.run_dir is not None and _journal_is_asynchronous(self.run_dir)
        #: Whether trials are told as they finish rather than in rounds.
        self.asynchronous = bool(asynchronous)
        self.registry = registry if registry is not None else get_registry()
        self.progress = progress
        self.console = console or Console(stderr=True)
        self.trials: list[Trial] = []
        self._said_finished = False
        self._best: Trial | None = None
        self.outcome: SearchOutcome | None = None
        #: What the run optimises and obeys (the spec's objectives and constraints).
        self.goal: SearchGoal = spec.goal(evaluator)
        self._check_strategy_goal()
        self._warn_if_selecting_on_reported()
        self._measured_checked = False
        self.stop_rules = tuple(parse_rule(text) for text in spec.stop)
        check_rules(self.stop_rules, self.goal, _declared_names(evaluator))
        #: Why the run stopped before its budget ran out: {"rule", "reason", "trial"}, else None.
        self.stopped: dict[str, Any] | None = None
        self._improved_at = -1

    def _check_strategy_goal(self) -> None:
        """The strategy must search the goal the journal records, or a resume (which builds
        it from the spec) would search another one."""
        objective = getattr(self.strategy, "objective", None)
        if objective is None:
            return
        theirs = as_goal(objective)
        if (theirs.objectives, theirs.constraints) != (self.goal.objectives, self.goal.constraints):
            raise NasforgeError(
                f"strategy '{self.strategy.name}' was built to search {theirs.describe()}, but the "
                f"spec names {self.goal.describe()}; build it with objective=spec.goal(evaluator)"
            )

    def _warn_if_selecting_on_reported(self) -> None:
        """The protocol: a run selects on one number and reports another (test accuracy);
        optimising the reported one measures the search on what it was tuned on."""
        reported = self.evaluator.reported
        names = [o.name for o in self.goal.objectives]
        if reported != self.evaluator.objective.name and reported in names:
            logger.warning(
                "the run optimises '%s', the number evaluator '%s' reports for the chosen "
                "architecture, so that number is measured on what the search selected on "
                "(optimistic; the benchmark protocol optimises '%s')",
                reported,
                self.evaluator.name,
                self.evaluator.objective.name,
            )

    # --- construction -----------------------------------------------------------------
    @classmethod
    def from_spec(
        cls,
        spec: ExperimentSpec,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        registry: Registry | None = None,
        executor_options: ExecutorOptions | None = None,
        **kwargs: Any,
    ) -> Experiment:
        """The run ``spec`` describes. ``executor_options`` say where its executor runs
        trials (a Ray cluster's address, each trial's CPUs and GPUs, retries of a trial
        whose worker died): not part of the spec, since they do not change what a trial
        computes, so a run may resume elsewhere."""
        registry = registry if registry is not None else get_registry()
        space, evaluator, strategy, executor = spec.build(registry, executor_options)
        return cls(
            space, strategy, evaluator, spec, executor=executor, run_dir=run_dir, registry=registry, **kwargs
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
        return cls.from_spec(spec, run_dir=run_dir, registry=registry, **kwargs)

    # --- running ----------------------------------------------------------------------
    def run(self) -> SearchOutcome:
        """Search until the budget is spent; returns (and stores) the outcome.

        Raises :class:`~nasforge.kernel.errors.RunInUseError` when another process writes the
        run directory, and :class:`~nasforge.kernel.errors.SearchFailedError` when every trial
        failed (the journal keeps them; no end record is written).
        """
        lock: RunLock | None = None
        writer: JournalWriter | None = None
        created = self.run_dir is not None and not self.run_dir.exists()
        replay = _Replay(False, [], False)
        self.stopped = None
        try:
            replay = self._load_replay()
            if self.run_dir is not None and not replay.ended:
                # Read again under the lock: what a writer appended before we got it counts.
                lock = RunLock(self.run_dir).acquire()
                replay = self._load_replay()
                writer = JournalWriter(journal_path(self.run_dir))
                self._note_repairs(writer)
                if not replay.exists:
                    writer.header(self._header())
            if self.asynchronous:
                self._loop_async(replay, writer)
            else:
                self._loop(replay, writer)
            if replay.ended:
                self.stopped = replay.stopped
            outcome = self._outcome()
            if writer is not None:
                writer.end(self._end_record(outcome))
        finally:
            self.executor.close()  # also when refused or failed: no pool is left behind
            if writer is not None:
                writer.close()
            if lock is not None:
                if writer is not None and not replay.exists and not self.trials:
                    self._discard_empty_run(lock, created)
                lock.release()
        self.outcome = outcome
        self._hook("nasforge_search_end", experiment=self, outcome=outcome)
        return outcome

    def _discard_empty_run(self, lock: RunLock, created: bool) -> None:
        """A new run that ended before its first trial (refused, interrupted, a budget too
        small for one trial) holds nothing: leave no journal that looks like a run."""
        assert self.run_dir is not None
        with contextlib.suppress(FileNotFoundError):
            journal_path(self.run_dir).unlink()
        lock.discard()
        if created:
            with contextlib.suppress(OSError):  # not empty: someone else's files stay
                self.run_dir.rmdir()

    def _note_repairs(self, writer: JournalWriter) -> None:
        for saved in writer.saved_fragments:
            self.console.print(f"[yellow]journal: cut a torn last line (a killed write), saved to {saved}[/]")

    def _loop(self, replay: _Replay, writer: JournalWriter | None) -> None:
        """Rounds of: ask (deduplicated), answer from the journal, evaluate the rest, record.

        One round asks for as many genotypes as the executor runs at once. Replayed
        trials come first and in order, so a resumed run stands exactly where it stood.
        """
        state = _LoopState(recorded=replay.trials, judge=not replay.ended)
        with self._progress_bar() as bar:
            while self.stopped is None and not self._finished(replay, state):
                asks = self._ask(state)
                if not asks and self._strategy_finished():
                    break
                if not asks:
                    self.console.print("[yellow]search space exhausted: the strategy only repeats itself[/]")
                    break
                answers = self._answer_from_journal(asks, state)
                self._evaluate_fresh(asks, answers)
                for asked, (result, wall) in zip(asks, answers, strict=True):
                    assert result is not None
                    self._record(asked, result, wall, state, writer, bar)

    def _loop_async(self, replay: _Replay, writer: JournalWriter | None) -> None:
        """Keep ``workers`` trials in flight; tell each result as it arrives, then ask anew.

        Asks are numbered in the order made. The journal holds trials in the order they
        were told, each with its ask number, so a replay tells the journal's results in
        that order: after each tell it asks (exactly as the run did) until ``workers``
        are in flight again. An ask the journal does not answer goes to the executor at
        once, while the replay goes on; once the journal is spent, results are taken as
        the executor finishes them. After a stop (rule, budget, strategy finished) no
        new ask is made, and the trials in flight are waited for and recorded.

        A trial's ``wall_seconds`` is its own time, submission to result; trials in
        flight together overlap, so a replayed trial counts 1/``workers`` of it toward
        the run's wall clock (the seconds budget).
        """
        state = _LoopState(recorded=replay.trials, judge=not replay.ended)
        flight = _Flight(answered=frozenset(n for n in replay.asked if n is not None))
        share = 1.0 / max(1, self.executor.workers)
        with self._progress_bar() as bar:
            while True:
                if self.stopped is None:
                    self._fill(replay, state, flight)
                if not flight.asks:
                    break
                told = len(self.trials)
                if told < len(state.recorded):
                    number = replay.asked[told]
                    assert number is not None
                    asked = self._replayed_ask(flight, number, state.recorded[told])
                    result, wall = state.recorded[told].result, state.recorded[told].wall_seconds
                    state.wall_before += wall * share  # in-flight trials' own times overlap
                else:
                    done = self.executor.next_done()
                    number = flight.tickets.pop(done.ticket)
                    asked = flight.asks.pop(number)
                    result, wall = done.result, done.wall_seconds
                self._record(asked, result, wall, state, writer, bar, asked_number=number)

    def _fill(self, replay: _Replay, state: _LoopState, flight: _Flight) -> None:
        """Ask until ``workers`` trials are in flight (or the budget, the strategy, or an
        ended run's journal allows no more); send the ones the journal lacks to the executor."""
        if flight.exhausted or self._strategy_finished():
            if self._strategy_finished():
                self._log_strategy_finished(len(self.trials))
            return
        in_flight = len(flight.asks)
        budget = self.spec.budget
        if budget.exhausted(
            trials=len(self.trials) + in_flight, seconds=state.wall(), simulated_seconds=state.sim_clock
        ):
            return
        want = self.executor.workers - in_flight
        if budget.trials is not None:
            want = min(want, budget.trials - len(self.trials) - in_flight)
        if replay.ended:  # re-reading an ended run: exactly the asks it made, all told
            want = min(want, len(state.recorded) - flight.next_number)
        if want <= 0:
            return
        asks = self._ask(state, want)
        if not asks and not self._strategy_finished():
            flight.exhausted = True
            self.console.print("[yellow]search space exhausted: the strategy only repeats itself[/]")
        for asked in asks:
            number = flight.next_number
            flight.next_number += 1
            flight.asks[number] = asked
            if number not in flight.answered:
                flight.tickets[self.executor.submit(self.evaluator, _as_evaluated(asked))] = number

    def _replayed_ask(self, flight: _Flight, number: int, old: Trial) -> Ask:
        """The in-flight ask the journal's next trial answers; one the strategy has not
        asked, or asked as something else, means another search: refused."""
        asked = flight.asks.pop(number, None)
        if asked is None:
            raise JournalError(
                f"journal diverges at trial {old.index}: it answers ask {number}, which the strategy "
                "has not made (different seed, workers or code?)"
            )
        self._check_replayed(asked, old, f"trial {old.index} (ask {number})")
        return asked

    def _check_replayed(self, asked: Ask, old: Trial, where: str) -> None:
        """Refuse a journal whose trial at ``where`` is not what the strategy asked: another
        search (seed, workers or code) wrote it."""
        g, fidelity = split(asked)
        if (old.genotype, old.fidelity) != (g, fidelity):
            raise JournalError(
                f"journal diverges at {where}: the strategy asked "
                f"{_describe(self.space.format(g), fidelity)}, the journal holds "
                f"{_describe(self.space.format(old.genotype), old.fidelity)} (different seed or code?)"
            )

    def _finished(self, replay: _Replay, state: _LoopState) -> bool:
        """The budget is spent, or an ended run has been re-read (never extended: its
        replayed wall time runs short of what the budget counted)."""
        done = len(self.trials)
        if self._strategy_finished():
            self._log_strategy_finished(done)
            return True
        if self.spec.budget.exhausted(trials=done, seconds=state.wall(), simulated_seconds=state.sim_clock):
            return True
        return replay.ended and done >= len(state.recorded)

    def _strategy_finished(self) -> bool:
        """The strategy's own "nothing more to propose" (a duck-typed strategy may lack it)."""
        return bool(getattr(self.strategy, "finished", False))

    def _log_strategy_finished(self, done: int) -> None:
        if not self._said_finished:
            self._said_finished = True
            self.console.print(
                f"strategy '{self.strategy.name}' has nothing more to propose: finished after {done} trials"
            )

    def _ask(self, state: _LoopState, want: int | None = None) -> list[Ask]:
        """Up to one round (or ``want``) of new genotypes (or proposals at a fidelity);
        with dedup, a repeat of the same genotype at the same fidelity is told its earlier
        result at once and asked again (empty: the strategy only repeats itself)."""
        if want is None:
            want = self.executor.workers
            budget = self.spec.budget
            if budget.trials is not None:
                want = min(want, budget.trials - len(self.trials))
        asks: list[Ask] = []
        while len(asks) < want and not self._strategy_finished():
            asked = self.strategy.ask()
            g, fidelity = split(asked)
            self.space.validate(g)  # a strategy bug surfaces here, not in a model
            self._check_fidelity(fidelity, getattr(asked, "stop_below", None) is not None)
            if self.spec.dedup and (g, fidelity) in state.seen:
                self.strategy.tell(asked, state.seen[g, fidelity])
                state.duplicates += 1
                if state.duplicates >= MAX_DUPLICATE_ASKS:
                    break
                continue
            state.duplicates = 0
            asks.append(asked)
        return asks

    def _check_fidelity(self, fidelity: int | None, stops: bool) -> None:
        """A budget the evaluator cannot vary (or stop early), or above its full one, is a
        pairing error."""
        if fidelity is None and not stops:
            return
        full = max_fidelity(self.evaluator)
        if full is None:
            what = "at a fidelity" if fidelity is not None else "that stop early"
            raise CapabilityError(
                f"strategy '{self.strategy.name}' asks for evaluations {what}, but evaluator "
                f"'{self.evaluator.name}' declares no fidelity it can vary (short-train varies epochs)"
            )
        if fidelity is not None and fidelity > full:
            raise CapabilityError(
                f"strategy '{self.strategy.name}' asked for {self.evaluator.fidelity}={fidelity}, above "
                f"evaluator '{self.evaluator.name}''s full {self.evaluator.fidelity}={full}"
            )

    def _at_full(self, trial: Trial) -> bool:
        """Whether a trial was evaluated at the full budget and not stopped early
        (:func:`nasforge.kernel.fidelity.at_full`): the best (and the front) is chosen among those."""
        return at_full(trial, max_fidelity(self.evaluator))

    def fidelity_spent(self) -> int | None:
        """The budget the run's trials spent, in the evaluator's fidelity unit (short-train:
        training epochs), a full evaluation counting the full budget; None when the
        evaluator declares no fidelity (:func:`nasforge.kernel.fidelity.fidelity_spent`)."""
        return fidelity_spent((trial_spent(t, self.evaluator) for t in self.trials), self.evaluator)

    def _answer_from_journal(self, asks: list[Ask], state: _LoopState) -> list[_Answer]:
        """(result, wall seconds) of each ask the journal holds, in order; (None, 0) for the
        rest. An ask other than the recorded one means another search: refused."""
        answers: list[_Answer] = []
        for offset, asked in enumerate(asks):
            index = len(self.trials) + offset
            if index >= len(state.recorded):
                answers.append((None, 0.0))
                continue
            old = state.recorded[index]
            self._check_replayed(asked, old, f"trial {index}")
            answers.append((old.result, old.wall_seconds))
            state.wall_before += old.wall_seconds
        return answers

    def _evaluate_fresh(self, asks: list[Ask], answers: list[_Answer]) -> None:
        """Fill in the unanswered asks through the executor (each charged an equal share
        of the round's wall time); a proposal at full fidelity goes as its bare genotype,
        so evaluators see exactly the calls they saw before fidelities existed."""
        fresh = [
            _as_evaluated(asked) for asked, (result, _) in zip(asks, answers, strict=True) if result is None
        ]
        if not fresh:
            return
        t0 = time.perf_counter()
        new = iter(self.executor.map(self.evaluator, fresh))
        per = (time.perf_counter() - t0) / len(fresh)
        for k, (result, _) in enumerate(answers):
            if result is None:
                answers[k] = (next(new), per)

    def _record(
        self,
        asked: Ask,
        result: Result,
        wall: float,
        state: _LoopState,
        writer: JournalWriter | None,
        bar: Any,
        asked_number: int | None = None,
    ) -> None:
        """One finished trial: journaled (if new), told, counted, hooked (if new), shown.
        ``asked_number``: which ask it answers, in an asynchronous run."""
        g, fidelity = split(asked)
        trial = Trial(index=len(self.trials), genotype=g, result=result, wall_seconds=wall, fidelity=fidelity)
        is_new = trial.index >= len(state.recorded)
        if not self._measured_checked and not result.failed:  # before anything is journaled
            check_measured(self.goal, result, self.evaluator.name)
            self._measured_checked = True
        if is_new and writer is not None:
            writer.trial(trial, asked=asked_number)
        self.strategy.tell(asked, result)
        state.seen[g, fidelity] = result
        state.sim_clock += result.cost
        self.trials.append(trial)
        pool = [t for t in (self._best, trial) if t is not None]
        self._best = best_trial([t for t in pool if self._at_full(t)] or pool, self.goal)
        if self._best is trial:
            self._improved_at = trial.index
        if is_new:
            self._hook("nasforge_trial_end", experiment=self, trial=trial)
        self._advance(bar, trial)
        if self.stopped is None and state.judge:
            self._check_stop(trial, state, is_new)

    def _check_stop(self, trial: Trial, state: _LoopState, is_new: bool) -> None:
        """After a trial: the spec's rules, then (for a new trial) the plugins' hook. The
        rest of the round is still recorded (it is evaluated already); no round follows."""
        ctx = StopContext(
            trials=self.trials,
            goal=self.goal,
            trials_since_improvement=trial.index - self._improved_at,
            wall_seconds=state.wall(),
            simulated_seconds=state.sim_clock,
        )
        found = first_stop(self.stop_rules, ctx)
        if found is None and is_new:
            why = self.registry.pm.hook.nasforge_should_stop(experiment=self, trial=trial)
            if why:
                found = ("nasforge_should_stop", str(why))
        if found is not None:
            rule, reason = found
            self.stopped = {"rule": rule, "reason": reason, "trial": trial.index}
            logger.info("stopping after trial %d: %s", trial.index, reason)

    # --- journal ----------------------------------------------------------------------
    def _header(self) -> dict[str, Any]:
        mode = {EVALUATION_KEY: ASYNCHRONOUS} if self.asynchronous else {}
        return {
            **mode,
            "spec": self.spec.to_json(),
            "space": {"name": self.space.name, "version": self.space.version},
            "evaluator": self.evaluator.describe(),
            "objective": attrs.asdict(self.evaluator.objective),
            "goal": self.goal.to_json(),
            "reported": self.evaluator.reported,
            "environment": describe_environment(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    def _load_replay(self) -> _Replay:
        if self.run_dir is None or is_unstarted(journal_path(self.run_dir)):
            return _Replay(False, [], False)
        reader = JournalReader(journal_path(self.run_dir))
        recorded_space = reader.header.get("space", {})
        if recorded_space.get("name") != self.space.name:
            raise JournalError(
                f"journal in {self.run_dir} is from space '{recorded_space.get('name')}', "
                f"not '{self.space.name}'"
            )
        if recorded_space.get("version") != self.space.version:
            raise JournalError(
                f"journal in {self.run_dir} is from {self.space.name} version "
                f"{recorded_space.get('version')}, this is version {self.space.version}"
            )
        diff = spec_differences(reader.header.get("spec"), self.spec, self.registry)
        if diff:
            raise JournalError(
                f"journal in {self.run_dir} was made with different settings ({', '.join(diff)}); "
                "use another run directory or `nasforge resume` it"
            )
        recorded_objective = (reader.header.get("objective") or {}).get("name")
        if recorded_objective is not None and recorded_objective != self.evaluator.objective.name:
            raise JournalError(
                f"journal in {self.run_dir} was made observing '{recorded_objective}', but evaluator "
                f"'{self.evaluator.name}' now observes '{self.evaluator.objective.name}' (its defaults "
                "changed), so its trials cannot be replayed; start a new run"
            )
        for trial in reader.trials:
            try:
                self.space.validate(trial.genotype)
            except InvalidGenotypeError as exc:
                raise JournalError(f"journal trial {trial.index}: {exc}") from exc
        self._check_mode(reader)
        stopped = (reader.end or {}).get("stopped")
        return _Replay(
            True,
            reader.trials,
            reader.end is not None,
            stopped if isinstance(stopped, dict) else None,
            asked=reader.asked,
        )

    def _check_mode(self, reader: JournalReader) -> None:
        """A journal replays only in the mode it was written in: an asynchronous one's
        tells interleave with its asks in an order only its ask numbers give."""
        recorded = reader.header.get(EVALUATION_KEY) == ASYNCHRONOUS
        if recorded != self.asynchronous:
            how = "asynchronously" if recorded else "synchronously"
            raise JournalError(
                f"journal in {self.run_dir} was evaluated {how}, so it only continues that way "
                f"(`nasforge resume {self.run_dir}` keeps its mode)"
            )
        if recorded and any(number is None for number in reader.asked):
            raise JournalError(f"{reader.path}: a trial of an asynchronous run lacks its '{ASKED_KEY}'")

    # --- results ----------------------------------------------------------------------
    def _outcome(self) -> SearchOutcome:
        if not self.trials:
            raise JournalError("the search finished without a single trial")
        best = self._best
        assert best is not None
        where = f"; they are in {journal_path(self.run_dir)}" if self.run_dir is not None else ""
        if all(t.result.failed for t in self.trials):
            first = " ".join((self.trials[0].result.error or "no error message").split())[:300]
            raise SearchFailedError(
                f"all {len(self.trials)} trials failed, so there is no best architecture "
                f"(first error: {first}){where}"
            )
        if not self.goal.feasible(best.result):
            raise InfeasibleSearchError(self._infeasible_message(best) + where)
        full = [t for t in self.trials if self._at_full(t)] or self.trials
        front = self.goal.front(full) if self.goal.multi_objective else ()
        return SearchOutcome(
            best=best.genotype,
            best_result=best.result,
            history=tuple(self.trials),
            produced_by={
                "spec": self.spec.to_json(),
                "evaluator": self.evaluator.describe(),
                "goal": self.goal.to_json(),
                "stopped": self.stopped,
            },
            members=tuple(t.genotype for t in front),
            front=front,
        )

    def _infeasible_message(self, nearest: Trial) -> str:
        """No trial satisfied the constraints: say so, and how near the nearest came."""
        result = nearest.result
        values = ", ".join(
            f"{c.name} {c.value(result):.4g}" for c in self.goal.constraints if not c.satisfied(result)
        )
        bounds = ", ".join(self.goal.constraint_texts())
        return (
            f"none of the {len(self.trials)} trials satisfied {bounds}, so there is no best "
            f"architecture (the nearest, {self.space.format(nearest.genotype)}, has {values})"
        )

    def _end_record(self, outcome: SearchOutcome) -> dict[str, Any]:
        """The journal's last line: the best, and a multi-objective run's front (best first)."""
        record: dict[str, Any] = {
            "best": outcome.best.to_json(),
            "best_text": self.space.format(outcome.best),
            "trials": len(self.trials),
            "goal": self.goal.to_json(),
            "stopped": self.stopped,
        }
        if self.fidelity_spent() is not None:
            record["fidelity_spent"] = self.fidelity_spent()
        if self.goal.multi_objective:
            record["front"] = [
                {"index": t.index, "genotype": t.genotype.to_json(), "text": self.space.format(t.genotype)}
                for t in outcome.front
            ]
        return record

    def best_so_far(self) -> Trial | None:
        """The best finished feasible trial (kept up to date as trials finish, not
        recomputed); None while no trial is feasible."""
        best = self._best
        return best if best is not None and self.goal.feasible(best.result) else None

    def _hook(self, name: str, **kwargs: Any) -> None:
        getattr(self.registry.pm.hook, name)(**kwargs)

    # --- progress ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _progress_bar(self) -> Iterator[Any]:
        """The rich bar (``progress``), and log records where no bar is live on a terminal
        (a pipeline's log, CI): :mod:`nasforge.kernel.progress_log`."""
        total = self.spec.budget.trials
        what = f"{self.spec.strategy} on {self.space.name}"
        self._log = ProgressLog(
            "nasforge.experiment", what, total, silent=bar_is_live(self.progress, self.console)
        )
        if not self.progress:
            yield None
        else:
            columns = [
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("best {task.fields[best]}"),
            ]
            with Progress(*columns, console=self.console, transient=False) as bar:
                self._task = bar.add_task(what, total=total, best="-")
                yield bar
        self._log.finish(len(self.trials), f"best {self.evaluator.objective.name} {self._best_value():.4g}")

    def _best_value(self) -> float:
        best = self.best_so_far()
        return best.result.objectives.get(self.evaluator.objective.name, math.nan) if best else math.nan

    def _advance(self, bar: Any, trial: Trial) -> None:
        value = self._best_value()
        self._log.update(len(self.trials), f"best {self.evaluator.objective.name} {value:.4g}")
        if bar is not None:
            bar.update(self._task, advance=1, best=f"{value:.4g}")


def _describe(text: str, fidelity: int | None) -> str:
    return text if fidelity is None else f"{text} at fidelity {fidelity}"


def _as_evaluated(asked: Ask) -> Genotype | Proposal:
    if isinstance(asked, Proposal) and (asked.fidelity is not None or asked.stop_below is not None):
        return asked
    return split(asked)[0]


def _declared_names(evaluator: Evaluator) -> list[str] | None:
    """What the evaluator declares it measures (None: it declares nothing, so only its
    results can tell)."""
    declared = declared_objectives(evaluator)
    return None if declared is None else list(declared)


def _journal_is_asynchronous(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` (if any) was evaluated asynchronously."""
    try:
        if is_unstarted(journal_path(run_dir)):
            return False
        return JournalReader(journal_path(run_dir)).header.get(EVALUATION_KEY) == ASYNCHRONOUS
    except JournalError:
        return False  # reading it again in run() reports what is wrong


class _Replay:
    def __init__(
        self,
        exists: bool,
        trials: list[Trial],
        ended: bool,
        stopped: dict[str, Any] | None = None,
        *,
        asked: list[int | None] | None = None,
    ) -> None:
        self.exists, self.trials, self.ended = exists, trials, ended
        #: Each trial's ask number (asynchronous runs; None each in a synchronous one).
        self.asked: list[int | None] = asked if asked is not None else [None] * len(trials)
        #: An ended run's recorded stop (re-reading it keeps that, rather than re-judging it).
        self.stopped = stopped


#: An ask's result and wall seconds; (None, 0.0) until it is evaluated.
_Answer = tuple[Result | None, float]


@attrs.define
class _Flight:
    """An asynchronous run's asks in flight."""

    #: Ask numbers the journal answers (a replay never sends these to the executor).
    answered: frozenset[int]
    #: Asked and not yet told, by ask number.
    asks: dict[int, Ask] = attrs.field(factory=dict)
    #: The executor's ticket of each ask it evaluates -> the ask's number.
    tickets: dict[int, int] = attrs.field(factory=dict)
    next_number: int = 0
    #: The strategy only repeats itself: no more asks.
    exhausted: bool = False


@attrs.define
class _LoopState:
    """What the loop carries from round to round."""

    #: The journal's trials, replayed before anything is evaluated.
    recorded: list[Trial]
    #: Every (genotype, fidelity) told so far and its result (dedup answers repeats from here).
    seen: dict[tuple[Genotype, int | None], Result] = attrs.field(factory=dict)
    #: Simulated seconds of every trial told (tabular benchmarks' clock).
    sim_clock: float = 0.0
    #: Wall seconds spent by earlier sessions on the trials replayed from the journal.
    wall_before: float = 0.0
    started: float = attrs.field(factory=time.perf_counter)
    #: Consecutive repeats asked (see MAX_DUPLICATE_ASKS).
    duplicates: int = 0
    #: Whether stop rules are checked (not while an ended run is re-read).
    judge: bool = True

    def wall(self) -> float:
        """Wall seconds of the whole search: earlier sessions' plus this one's."""
        return self.wall_before + (time.perf_counter() - self.started)

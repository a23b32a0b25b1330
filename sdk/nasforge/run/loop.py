"""The thin ask/tell loop of a run, and the one place a finished trial is recorded.

Everything a run does per trial happens in :meth:`RunLoop.record`, in this order: the
goal's names checked on the first success, the trial journaled (if new), told to the
strategy, remembered for duplicate detection, counted on the simulated clock, weighed for
the best (among full-budget trials), announced to the hooks (if new), shown, and judged
by the stop rules. Two schedules drive it: rounds of asks (:mod:`nasforge.run.rounds`,
the default) and trials kept in flight (:mod:`nasforge.run.in_flight`).
"""

from __future__ import annotations

import time

import attrs

from nasforge.kernel.fidelity import Ask, Proposal, max_fidelity, split
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result, Trial, best_trial
from nasforge.run.asking import Asker
from nasforge.run.fidelity_spent import at_full
from nasforge.run.goal_checks import check_measured
from nasforge.run.replay import Replay
from nasforge.run.run_directory import RunJournal
from nasforge.run.run_face import RunFace
from nasforge.run.run_progress import RunProgress
from nasforge.run.stop_judge import StopJudge


@attrs.define
class LoopState:
    """The run's clocks as the loop carries them from trial to trial."""

    #: Simulated seconds of every trial told (tabular benchmarks' clock).
    sim_clock: float = 0.0
    #: Wall seconds spent by earlier sessions on the trials replayed from the journal.
    wall_before: float = 0.0
    started: float = attrs.field(factory=time.perf_counter)

    def wall(self) -> float:
        """Wall seconds of the whole search: earlier sessions' plus this one's."""
        return self.wall_before + (time.perf_counter() - self.started)


class RunLoop:
    """One run's loop: the experiment's strategy and evaluator, its journal and the parts."""

    def __init__(
        self, experiment: RunFace, replay: Replay, journal: RunJournal, progress: RunProgress
    ) -> None:
        self.exp, self.replay, self.journal, self.progress = experiment, replay, journal, progress
        self.recorded = replay.trials
        self.asker = Asker(
            experiment.strategy,
            experiment.space,
            experiment.evaluator,
            dedup=experiment.spec.dedup,
            console=experiment.console,
        )
        self.state = LoopState()
        #: Stop rules are not judged while an ended run is re-read (its stop is recorded).
        self.judge = StopJudge(experiment, judging=not replay.ended)
        self.best: Trial | None = None
        self.full = max_fidelity(experiment.evaluator)
        self._measured_checked = False

    # --- the budget ---------------------------------------------------------------------
    def spent(self, in_flight: int = 0) -> bool:
        """Whether the budget is spent, counting ``in_flight`` trials as told."""
        return self.exp.spec.budget.exhausted(
            trials=len(self.exp.trials) + in_flight,
            seconds=self.state.wall(),
            simulated_seconds=self.state.sim_clock,
        )

    def room(self, want: int, in_flight: int = 0) -> int:
        """``want`` trials, or fewer where the trial budget leaves less room."""
        trials = self.exp.spec.budget.trials
        return want if trials is None else min(want, trials - len(self.exp.trials) - in_flight)

    def strategy_finished(self) -> bool:
        """The strategy has nothing more to propose (said once, with the trials so far)."""
        if self.asker.finished:
            self.asker.note_finished(len(self.exp.trials))
            return True
        return False

    # --- one finished trial -------------------------------------------------------------
    def record(self, asked: Ask, result: Result, wall: float, asked_number: int | None = None) -> None:
        """One finished trial: journaled (if new), told, counted, hooked (if new), shown.
        ``asked_number``: which ask it answers, in an asynchronous run."""
        exp = self.exp
        g, fidelity = split(asked)
        trial = Trial(index=len(exp.trials), genotype=g, result=result, wall_seconds=wall, fidelity=fidelity)
        is_new = trial.index >= len(self.recorded)
        if not self._measured_checked and not result.failed:  # before anything is journaled
            check_measured(exp.goal, result, exp.evaluator.name)
            self._measured_checked = True
        if is_new:
            self.journal.trial(trial, asked_number)
        exp.strategy.tell(asked, result)
        self.asker.told(g, fidelity, result)
        self.state.sim_clock += result.cost
        exp.trials.append(trial)
        pool = [t for t in (self.best, trial) if t is not None]
        self.best = best_trial([t for t in pool if at_full(t, self.full)] or pool, exp.goal)
        if self.best is trial:
            self.judge.improved(trial.index)
        if is_new:
            exp.events.trial_end(exp, trial)
        self.progress.advance(len(exp.trials), exp.best_value())
        if exp.stopped is None:
            exp.stopped = self.judge.after(trial, self.state, is_new=is_new)


def as_evaluated(asked: Ask) -> Genotype | Proposal:
    """What the executor evaluates: a proposal at full fidelity goes as its bare genotype,
    so evaluators see exactly the calls they saw before fidelities existed."""
    if isinstance(asked, Proposal) and (asked.fidelity is not None or asked.stop_below is not None):
        return asked
    return split(asked)[0]


#: An ask's result and wall seconds; (None, 0.0) until it is evaluated.
Answer = tuple[Result | None, float]

"""Whether a run stops after a trial: the spec's stop rules, then the plugins' hook.

The rules (:mod:`nasforge.run.stop_rules`) are checked after every trial, replayed ones too,
so a resumed run stops where the uninterrupted one would have; ``nasforge_should_stop``
is asked after every new trial only. The rest of a round is still recorded (it is
evaluated already); no round follows.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from nasforge.kernel.result import Trial
from nasforge.run.run_face import RunFace
from nasforge.run.stop_rules import StopContext, first_stop

logger = logging.getLogger("nasforge.experiment")


class Clocks(Protocol):
    sim_clock: float

    def wall(self) -> float: ...


class StopJudge:
    """Judges an experiment's trials against its stop rules and the stop hook."""

    def __init__(self, experiment: RunFace, *, judging: bool = True) -> None:
        self.exp = experiment
        self.judging = judging
        #: The index of the trial that last became the best (-1: none yet).
        self.improved_at = -1

    def improved(self, index: int) -> None:
        self.improved_at = index

    def after(self, trial: Trial, clocks: Clocks, *, is_new: bool) -> dict[str, Any] | None:
        """Why the run stops after ``trial`` ({"rule", "reason", "trial"}), or None."""
        if not self.judging:
            return None
        exp = self.exp
        ctx = StopContext(
            trials=exp.trials,
            goal=exp.goal,
            trials_since_improvement=trial.index - self.improved_at,
            wall_seconds=clocks.wall(),
            simulated_seconds=clocks.sim_clock,
        )
        found = first_stop(exp.stop_rules, ctx)
        if found is None and is_new:
            why = exp.events.should_stop(exp, trial)
            if why:
                found = ("nasforge_should_stop", str(why))
        if found is None:
            return None
        rule, reason = found
        logger.info("stopping after trial %d: %s", trial.index, reason)
        return {"rule": rule, "reason": reason, "trial": trial.index}

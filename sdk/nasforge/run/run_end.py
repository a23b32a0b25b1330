"""The end of a run: its outcome, and the journal's end record.

A run in which every trial failed has no best architecture and ends in
:class:`~nasforge.kernel.errors.SearchFailedError`, not in a report of success; one in
which no trial satisfied the constraints ends in
:class:`~nasforge.kernel.errors.InfeasibleSearchError`. A run of several objectives ends
with its Pareto front, computed from every trial it evaluated at the full budget, so
every strategy's run, and its resume, has the same one.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.errors import InfeasibleSearchError, JournalError, SearchFailedError
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.result import Trial
from nasforge.run.journal_file import journal_path
from nasforge.run.plugin_faults import FAULTS_KEY, PluginFault
from nasforge.run.run_face import RunFace
from nasforge.run.trial_failures import FAILURES_KEY, trial_failures


def outcome_of(exp: RunFace, best: Trial | None, full: list[Trial]) -> SearchOutcome:
    """The run's outcome: ``best`` (the loop's), and the front of the ``full``-budget trials."""
    trials = exp.trials
    if not trials:
        raise JournalError("the search finished without a single trial")
    assert best is not None
    where = f"; they are in {journal_path(exp.run_dir)}" if exp.run_dir is not None else ""
    if all(t.result.failed for t in trials):
        first = " ".join((trials[0].result.error or "no error message").split())[:300]
        raise SearchFailedError(
            f"all {len(trials)} trials failed, so there is no best architecture (first error: {first}){where}"
        )
    if not exp.goal.feasible(best.result):
        raise InfeasibleSearchError(_infeasible_message(exp, best) + where)
    front = exp.goal.front(full) if exp.goal.multi_objective else ()
    failures = trial_failures(trials, exp.space.format)
    return SearchOutcome(
        best=best.genotype,
        best_result=best.result,
        history=tuple(trials),
        produced_by={
            "spec": exp.spec.to_json(),
            "evaluator": exp.evaluator.describe(),
            "goal": exp.goal.to_json(),
            "stopped": exp.stopped,
            **({FAILURES_KEY: failures.to_json()} if failures is not None else {}),
        },
        members=tuple(t.genotype for t in front),
        front=front,
    )


def _infeasible_message(exp: RunFace, nearest: Trial) -> str:
    """No trial satisfied the constraints: say so, and how near the nearest came."""
    result = nearest.result
    values = ", ".join(
        f"{c.name} {c.value(result):.4g}" for c in exp.goal.constraints if not c.satisfied(result)
    )
    bounds = ", ".join(exp.goal.constraint_texts())
    return (
        f"none of the {len(exp.trials)} trials satisfied {bounds}, so there is no best "
        f"architecture (the nearest, {exp.space.format(nearest.genotype)}, has {values})"
    )


def with_faults(outcome: SearchOutcome, faults: list[PluginFault]) -> SearchOutcome:
    """``outcome`` whose ``produced_by`` names the plugins whose event hooks raised (as
    JSON, under ``plugin_faults``); unchanged when none did."""
    if not faults:
        return outcome
    return attrs.evolve(
        outcome, produced_by={**outcome.produced_by, FAULTS_KEY: [f.to_json() for f in faults]}
    )


def end_record(exp: RunFace, outcome: SearchOutcome) -> dict[str, Any]:
    """The journal's last line: the best, a multi-objective run's front (best first), the
    failed trials and the plugins whose event hooks raised (each only where there are any)."""
    record: dict[str, Any] = {
        "best": outcome.best.to_json(),
        "best_text": exp.space.format(outcome.best),
        "trials": len(exp.trials),
        "goal": exp.goal.to_json(),
        "stopped": exp.stopped,
    }
    spent = exp.fidelity_spent()
    if spent is not None:
        record["fidelity_spent"] = spent
    for key in (FAILURES_KEY, FAULTS_KEY):  # only where a trial failed, a plugin's hook raised
        if outcome.produced_by.get(key):
            record[key] = outcome.produced_by[key]
    if exp.goal.multi_objective:
        record["front"] = [
            {"index": t.index, "genotype": t.genotype.to_json(), "text": exp.space.format(t.genotype)}
            for t in outcome.front
        ]
    return record

"""What a run report shows, read from a run directory's journal alone.

The journal is the run's single source of truth, so the report reads nothing else: the
header's spec and goal, the trials, the end record (best, front, why it stopped). The
space is rebuilt from the spec only to write genotypes in their canonical text and to
draw the best cell; when its plugin is not installed the report still comes out, with
the genotypes as their raw choices and no cell drawing.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Objective, Trial, best_trial
from nasforge.run.fidelity_spent import at_full, budget_trained, varies_budget, was_stopped
from nasforge.run.goal_checks import goal_of_header
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec

logger = logging.getLogger("nasforge.report")


@attrs.frozen
class TrialRow:
    """One line of the per-trial table."""

    trial: Trial
    text: str
    #: ok, failed, infeasible, stopped (early, by a pruner); "best" or "front" where the
    #: run chose it
    status: str


@attrs.frozen
class RunView:
    """Everything the page draws or lists, plain data (no figures yet)."""

    run_dir: Path
    header: dict[str, Any]
    spec: dict[str, Any]
    goal: SearchGoal
    rows: tuple[TrialRow, ...]
    #: Objective columns of the table: the goal's first, then whatever else results carry.
    columns: tuple[str, ...]
    best: Trial | None
    front: tuple[Trial, ...]
    finished: bool
    stopped: dict[str, Any] | None
    #: The run's space (None where its plugin is missing), for the cell drawing.
    space: Any
    #: Why there is no space to draw with, when there is none.
    space_note: str
    #: Name of the clock trial costs are counted on: "simulated" or "wall".
    clock: str
    #: The architecture the run chose: the end record's (a one-shot run derives it at the
    #: end), else the best trial's; None when there is none yet.
    chosen: Genotype | None = None
    #: What one trial is: "trial", or "epoch" for a one-shot run (one journal record an epoch).
    unit: str = "trial"
    #: The budget a multi-fidelity run varied (e.g. "epochs") and its full value; None for
    #: a run whose evaluator has none or whose trials all ran at the full budget.
    fidelity: str | None = None
    full_fidelity: int | None = None

    @property
    def multi_fidelity(self) -> bool:
        return self.fidelity is not None

    def budget_of(self, trial: Trial) -> int | None:
        """The budget a trial was asked for (its fidelity; the full one when it has none)."""
        return self.full_fidelity if trial.fidelity is None else trial.fidelity

    def spent_of(self, trial: Trial) -> int | None:
        """What a trial spent of the budget: what its result says it trained (less than
        asked when stopped early), else what it was asked for."""
        done = budget_trained(trial, self.fidelity)
        return self.full_fidelity if done is None else done

    def at_full(self, trial: Trial) -> bool:
        """Whether a trial counts as a full evaluation (:func:`nasforge.kernel.fidelity.at_full`)."""
        return at_full(trial, self.full_fidelity)

    @property
    def trials(self) -> tuple[Trial, ...]:
        return tuple(r.trial for r in self.rows)

    @property
    def chosen_text(self) -> str:
        return "" if self.chosen is None else _text(self.space, self.chosen)


def read_run(run_dir: str | os.PathLike[str], registry: Registry, *, space: str | None = None) -> RunView:
    """The view of the run in ``run_dir``; a missing directory or one that holds no
    nasforge run is one :class:`NasforgeError` line. ``space`` stands for the space the run
    recorded (its file moved): made with the run's options, it writes the genotypes."""
    path = Path(run_dir)
    if not path.exists():
        raise NasforgeError(f"no run directory at {path}")
    if not path.is_dir():
        raise NasforgeError(f"{path} is not a run directory (a run directory holds journal.jsonl)")
    if not journal_path(path).exists():
        raise NasforgeError(f"{path} holds no nasforge run (no {journal_path(path).name})")
    reader = JournalReader.of_run(path)
    header = reader.header
    spec: dict[str, Any] = header["spec"] if isinstance(header.get("spec"), dict) else {}
    one_shot = header.get("mode") == "one-shot"
    goal = goal_of_header(header) or _goal_from_results(reader.trials)
    if goal is None:
        raise JournalError(f"{reader.path}: the run names no objective and its trials carry none")
    found, note = _space_of(spec, registry) if space is None else (_space_given(spec, registry, space), "")
    end = reader.end or {}
    fidelity, full = _fidelity(header, reader.trials, registry)
    full_trials = [t for t in reader.trials if at_full(t, full)] or reader.trials
    best = _best(full_trials, goal)
    front = goal.front(full_trials) if goal.multi_objective else ()
    front_ids = {t.index for t in front}
    rows = tuple(
        TrialRow(t, _text(found, t.genotype), _status(t, goal, best, front_ids)) for t in reader.trials
    )
    stopped = end.get("stopped") if isinstance(end.get("stopped"), dict) else None
    chosen = best.genotype if best is not None else None
    if isinstance(end.get("best"), dict):
        try:
            chosen = Genotype.from_json(end["best"])
        except (KeyError, TypeError, ValueError) as exc:
            raise JournalError(f"{reader.path}: malformed end record best ({exc})") from exc
    return RunView(
        run_dir=path,
        header=header,
        spec=spec,
        goal=goal,
        rows=rows,
        columns=_columns(goal, reader.trials, header.get("reported")),
        best=best,
        front=front,
        finished=reader.end is not None,
        stopped=stopped,
        space=found,
        space_note=note,
        clock=_clock(spec, registry),
        chosen=chosen,
        unit="epoch" if one_shot else "trial",
        fidelity=fidelity,
        full_fidelity=full,
    )


def _fidelity(
    header: dict[str, Any], trials: list[Trial], registry: Registry
) -> tuple[str | None, int | None]:
    """(name, full value) of the budget a multi-fidelity run varied, from the evaluator's
    declared fidelity and the value the header's evaluator record holds; (None, None)
    when no trial ran at a smaller budget or was stopped early (nothing to show)."""
    if not varies_budget(trials):
        return None, None
    described: dict[str, Any] = header["evaluator"] if isinstance(header.get("evaluator"), dict) else {}
    evaluator = described.get("evaluator") or (header.get("spec") or {}).get("evaluator")
    name = None
    with contextlib.suppress(NasforgeError):
        name = getattr(registry.get("evaluator", evaluator), "fidelity", None) if evaluator else None
    name = name or "fidelity"
    full = described.get(name)
    if not isinstance(full, int) or isinstance(full, bool):
        full = max((t.fidelity for t in trials if t.fidelity is not None), default=None)
    return name, full


def _goal_from_results(trials: list[Trial]) -> SearchGoal | None:
    """What to plot of a run without a recorded objective (a one-shot run's epochs): an
    accuracy its records carry (larger is better), else a loss (smaller is better), else
    their first number, so a curve and a table can still be drawn."""
    names = list(dict.fromkeys(n for t in trials for n in t.result.objectives))
    if not names:
        return None
    for pick, higher in ((lambda n: "acc" in n, True), (lambda n: "loss" in n, False)):
        found = [n for n in names if pick(n)]
        if found:
            return SearchGoal.of([Objective(found[0], higher_is_better=higher)])
    return SearchGoal.of([Objective(names[0], higher_is_better=True)])


def _space_of(spec: dict[str, Any], registry: Registry) -> tuple[Any, str]:
    try:
        return ExperimentSpec.from_json(spec).build_space(registry), ""
    except NasforgeError as exc:
        logger.warning("report: cannot rebuild the run's space (%s); genotypes shown as choices", exc)
        return None, f"the run's space cannot be rebuilt here ({exc})"


def _space_given(spec: dict[str, Any], registry: Registry, space: str) -> Any:
    """The run's space made from ``space`` (with the run's options); what cannot be is one line."""
    from nasforge.kernel.space_source import canonical, is_source

    named = canonical(space) if is_source(space) else space
    return ExperimentSpec.from_json({**spec, "space": named}).build_space(registry)


def _clock(spec: dict[str, Any], registry: Registry) -> str:
    """Trial costs are simulated seconds where the evaluator says so (a tabular benchmark)."""
    name = spec.get("evaluator")
    try:
        simulated = bool(getattr(registry.get("evaluator", name), "simulated", False)) if name else False
    except NasforgeError:
        simulated = False
    return "simulated" if simulated else "wall"


def _text(space: Any, g: Genotype) -> str:
    if space is not None:
        try:
            return str(space.format(g))
        except Exception:  # noqa: BLE001 - a genotype the rebuilt space refuses is shown raw
            pass
    return " ".join(map(str, g.choices))


def _best(trials: list[Trial], goal: SearchGoal) -> Trial | None:
    feasible = [t for t in trials if not t.result.failed and goal.feasible(t.result)]
    return best_trial(feasible, goal)


def _status(t: Trial, goal: SearchGoal, best: Trial | None, front: set[int]) -> str:
    if t.result.failed:
        return "failed"
    if not goal.feasible(t.result):
        return "infeasible"
    if was_stopped(t):
        return "stopped"
    if best is not None and t.index == best.index:
        return "best"
    return "front" if t.index in front else "ok"


def _columns(goal: SearchGoal, trials: list[Trial], reported: Any) -> tuple[str, ...]:
    names = [o.name for o in goal.objectives] + [c.name for c in goal.constraints]
    if isinstance(reported, str):
        names.append(reported)
    for t in trials:
        names.extend(k for k, v in t.result.objectives.items() if isinstance(v, int | float))
    return tuple(dict.fromkeys(names))


def value(trial: Trial, name: str) -> float:
    """An objective of a trial, NaN where it has none (a failed trial)."""
    got = trial.result.objectives.get(name)
    return float(got) if isinstance(got, int | float) and not isinstance(got, bool) else math.nan

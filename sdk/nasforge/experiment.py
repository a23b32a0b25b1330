"""Run a strategy against an evaluator under a budget, journaled and resumable.

Resume works by replay (PyGlove's recover): the strategy is rebuilt with the same seed,
and every ask is answered from the journal until the journal runs out, after which new
evaluations begin. A deterministic strategy therefore continues exactly where it was
killed; if it asks for something other than what the journal recorded, the run refuses
to continue instead of silently mixing two searches.

Only one process writes a run directory at a time (:mod:`nasforge.run_lock`); a run
whose journal has ended is only read, so it can be re-read from read-only media. A run
in which every trial failed has no best architecture and ends in
:class:`~nasforge.errors.SearchFailedError`, not in a report of success.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nasforge.environment import describe_environment
from nasforge.errors import InvalidGenotypeError, JournalError, SearchFailedError
from nasforge.evaluator import Evaluator
from nasforge.executors import Executor, InProcessExecutor
from nasforge.genotype import Genotype
from nasforge.journal import JournalReader, JournalWriter, is_unstarted, journal_path
from nasforge.registry import Registry, get_registry
from nasforge.result import Result, SearchOutcome, Trial, best_trial
from nasforge.run_lock import RunLock
from nasforge.search_space import SearchSpace
from nasforge.spec import ExperimentSpec
from nasforge.strategy import Strategy

#: Consecutive already-seen asks after which a dedup'd search is declared exhausted.
MAX_DUPLICATE_ASKS = 10_000


class Experiment:
    """One search run. Build it from a spec (``from_spec``) or from instances."""

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
    ) -> None:
        evaluator.preflight()  # an evaluator that cannot serve the space is refused before any trial
        self.space, self.strategy, self.evaluator, self.spec = space, strategy, evaluator, spec
        self.executor = executor or InProcessExecutor()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.registry = registry
        self.progress = progress
        self.console = console or Console(stderr=True)
        self.trials: list[Trial] = []
        self._best: Trial | None = None
        self.outcome: SearchOutcome | None = None

    # --- construction -----------------------------------------------------------------
    @classmethod
    def from_spec(
        cls,
        spec: ExperimentSpec,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        registry: Registry | None = None,
        **kwargs: Any,
    ) -> Experiment:
        registry = registry or get_registry()
        space, evaluator, strategy, executor = spec.build(registry)
        return cls(
            space, strategy, evaluator, spec, executor=executor, run_dir=run_dir, registry=registry, **kwargs
        )

    @classmethod
    def resume(
        cls, run_dir: str | os.PathLike[str], *, registry: Registry | None = None, **kwargs: Any
    ) -> Experiment:
        """Rebuild a run from its journal header; ``run()`` then continues it."""
        reader = JournalReader.of_run(run_dir)
        try:
            spec = ExperimentSpec.from_json(reader.header["spec"])
        except (KeyError, TypeError) as exc:
            raise JournalError(f"{reader.path}: header holds no usable experiment spec ({exc})") from exc
        return cls.from_spec(spec, run_dir=run_dir, registry=registry, **kwargs)

    # --- running ----------------------------------------------------------------------
    def run(self) -> SearchOutcome:
        """Search until the budget is spent; returns (and stores) the outcome.

        Raises :class:`~nasforge.errors.RunInUseError` when another process writes the
        run directory, and :class:`~nasforge.errors.SearchFailedError` when every trial
        failed (the journal keeps them; no end record is written).
        """
        lock: RunLock | None = None
        writer: JournalWriter | None = None
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
            self._loop(replay, writer)
            outcome = self._outcome()
            if writer is not None:
                writer.end(
                    {
                        "best": outcome.best.to_json(),
                        "best_text": self.space.format(outcome.best),
                        "trials": len(self.trials),
                    }
                )
        finally:
            self.executor.close()  # also when refused or failed: no pool is left behind
            if writer is not None:
                writer.close()
            if lock is not None:
                lock.release()
        self.outcome = outcome
        self._hook("nasforge_search_end", experiment=self, outcome=outcome)
        return outcome

    def _note_repairs(self, writer: JournalWriter) -> None:
        for saved in writer.saved_fragments:
            self.console.print(f"[yellow]journal: cut a torn last line (a killed write), saved to {saved}[/]")

    def _loop(self, replay: _Replay, writer: JournalWriter | None) -> None:
        recorded = replay.trials
        budget = self.spec.budget
        seen: dict[Genotype, Result] = {}
        sim_clock = 0.0
        wall_before = 0.0  # wall seconds spent by earlier (replayed) sessions
        started = time.perf_counter()
        duplicates = 0
        with self._progress_bar() as bar:
            while True:
                done = len(self.trials)
                wall = wall_before + (time.perf_counter() - started)
                if budget.exhausted(trials=done, seconds=wall, simulated_seconds=sim_clock):
                    break
                if replay.ended and done >= len(recorded):
                    break  # an ended run is re-read, never extended (replayed wall time runs short)
                want = self.executor.workers
                if budget.trials is not None:
                    want = min(want, budget.trials - done)
                asks: list[Genotype] = []
                while len(asks) < want:
                    g = self.strategy.ask()
                    self.space.validate(g)  # a strategy bug surfaces here, not in a model
                    if self.spec.dedup and g in seen:
                        self.strategy.tell(g, seen[g])
                        duplicates += 1
                        if duplicates >= MAX_DUPLICATE_ASKS:
                            break
                        continue
                    duplicates = 0
                    asks.append(g)
                if not asks:
                    self.console.print("[yellow]search space exhausted: the strategy only repeats itself[/]")
                    break
                # answer from the journal first, then evaluate the rest
                results: list[Result | None] = []
                walls: list[float] = []
                for offset, g in enumerate(asks):
                    index = len(self.trials) + offset
                    if index < len(recorded):
                        old = recorded[index]
                        if old.genotype != g:
                            raise JournalError(
                                f"journal diverges at trial {index}: the strategy asked "
                                f"{self.space.format(g)}, the journal holds "
                                f"{self.space.format(old.genotype)} (different seed or code?)"
                            )
                        results.append(old.result)
                        walls.append(old.wall_seconds)
                        wall_before += old.wall_seconds
                    else:
                        results.append(None)
                        walls.append(0.0)
                fresh = [g for g, r in zip(asks, results, strict=True) if r is None]
                if fresh:
                    t0 = time.perf_counter()
                    new = iter(self.executor.map(self.evaluator, fresh))
                    per = (time.perf_counter() - t0) / len(fresh)
                    for k, r in enumerate(results):
                        if r is None:
                            results[k], walls[k] = next(new), per
                for g, r, w in zip(asks, results, walls, strict=True):
                    assert r is not None
                    trial = Trial(index=len(self.trials), genotype=g, result=r, wall_seconds=w)
                    is_new = trial.index >= len(recorded)
                    if is_new and writer is not None:
                        writer.trial(trial)
                    self.strategy.tell(g, r)
                    seen[g] = r
                    sim_clock += r.cost
                    self.trials.append(trial)
                    self._best = best_trial(
                        [t for t in (self._best, trial) if t is not None], self.strategy.objective
                    )
                    if is_new:
                        self._hook("nasforge_trial_end", experiment=self, trial=trial)
                    self._advance(bar, trial)

    # --- journal ----------------------------------------------------------------------
    def _header(self) -> dict[str, Any]:
        return {
            "spec": self.spec.to_json(),
            "space": {"name": self.space.name, "version": self.space.version},
            "evaluator": self.evaluator.describe(),
            "objective": attrs.asdict(self.evaluator.objective),
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
        recorded_spec = reader.header.get("spec")
        if recorded_spec != self.spec.to_json():
            mine = self.spec.to_json()
            diff = sorted(k for k in mine if (recorded_spec or {}).get(k) != mine[k])
            raise JournalError(
                f"journal in {self.run_dir} was made with different settings ({', '.join(diff)}); "
                "use another run directory or `nasforge resume` it"
            )
        for trial in reader.trials:
            try:
                self.space.validate(trial.genotype)
            except InvalidGenotypeError as exc:
                raise JournalError(f"journal trial {trial.index}: {exc}") from exc
        return _Replay(True, reader.trials, reader.end is not None)

    # --- results ----------------------------------------------------------------------
    def _outcome(self) -> SearchOutcome:
        if not self.trials:
            raise JournalError("the search finished without a single trial")
        best = self.best_so_far()
        assert best is not None
        if all(t.result.failed for t in self.trials):
            first = " ".join((self.trials[0].result.error or "no error message").split())[:300]
            where = f"; they are in {journal_path(self.run_dir)}" if self.run_dir is not None else ""
            raise SearchFailedError(
                f"all {len(self.trials)} trials failed, so there is no best architecture "
                f"(first error: {first}){where}"
            )
        return SearchOutcome(
            best=best.genotype,
            best_result=best.result,
            history=tuple(self.trials),
            produced_by={"spec": self.spec.to_json(), "evaluator": self.evaluator.describe()},
        )

    def best_so_far(self) -> Trial | None:
        """The best finished trial (kept up to date as trials finish, not recomputed)."""
        return self._best

    def _hook(self, name: str, **kwargs: Any) -> None:
        if self.registry is not None:
            getattr(self.registry.pm.hook, name)(**kwargs)

    # --- progress ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _progress_bar(self) -> Iterator[Any]:
        if not self.progress:
            yield None
            return
        total = self.spec.budget.trials
        columns = [
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("best {task.fields[best]}"),
        ]
        with Progress(*columns, console=self.console, transient=False) as bar:
            self._task = bar.add_task(f"{self.spec.strategy} on {self.space.name}", total=total, best="-")
            yield bar

    def _advance(self, bar: Any, trial: Trial) -> None:
        if bar is None:
            return
        best = self.best_so_far()
        value = best.result.objectives.get(self.evaluator.objective.name, math.nan) if best else math.nan
        bar.update(self._task, advance=1, best=f"{value:.4g}")


class _Replay:
    def __init__(self, exists: bool, trials: list[Trial], ended: bool) -> None:
        self.exists, self.trials, self.ended = exists, trials, ended

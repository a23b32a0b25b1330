"""What a run's journal already holds, read back for a resume: checked before it is replayed.

A journal replays only into the run that wrote it: the same space and version, the same
settings, the same training data (its digest), the same observed objective and the same
evaluation mode. Anything else is
another search, refused in one line rather than silently mixed with this one. During
the replay every ask must be the one the journal recorded (:func:`check_replayed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import InvalidGenotypeError, JournalError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Ask, split
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SearchSpace
from nasforge.run.advice import advised, resume_advice
from nasforge.run.journal_file import ASKED_KEY, JournalReader, is_unstarted, journal_path
from nasforge.run.plugin_faults import PluginFault, recorded_faults
from nasforge.run.run_data import check_recorded_data
from nasforge.run.spec import ExperimentSpec, spec_differences

#: Journal header key (and its value) of an asynchronous run.
EVALUATION_KEY, ASYNCHRONOUS = "evaluation", "asynchronous"


@attrs.frozen
class Replay:
    """A run directory's journal as a resume sees it (nothing: a new run)."""

    exists: bool = False
    trials: list[Trial] = attrs.field(factory=list)
    #: Whether the run ended (it is then only re-read, never extended).
    ended: bool = False
    #: An ended run's recorded stop (re-reading it keeps that, rather than re-judging it).
    stopped: dict[str, Any] | None = None
    #: Each trial's ask number (an asynchronous run's; None each in a synchronous one's).
    asked: list[int | None] = attrs.field(factory=list)
    #: An ended run's recorded plugin faults (its event hooks that raised).
    plugin_faults: list[PluginFault] = attrs.field(factory=list)


@attrs.frozen
class RunIdentity:
    """What a journal must have been written by to replay into this run."""

    run_dir: Path
    space: SearchSpace
    spec: ExperimentSpec
    registry: Registry
    evaluator: Evaluator
    asynchronous: bool
    #: The training data the run's evaluator trains on (None: none, or not known).
    data: TensorData | None = None


def load_replay(who: RunIdentity) -> Replay:
    """The journal in ``who.run_dir``, checked against the run (a new run: an empty replay)."""
    path = journal_path(who.run_dir)
    if is_unstarted(path):
        return Replay()
    reader = JournalReader(path)
    _check_header(reader, who)
    for trial in reader.trials:
        try:
            who.space.validate(trial.genotype)
        except InvalidGenotypeError as exc:
            raise JournalError(f"journal trial {trial.index}: {exc}") from exc
    _check_mode(reader, who)
    stopped = (reader.end or {}).get("stopped")
    return Replay(
        True,
        reader.trials,
        reader.end is not None,
        stopped if isinstance(stopped, dict) else None,
        asked=reader.asked,
        plugin_faults=recorded_faults(reader.end),
    )


def _check_header(reader: JournalReader, who: RunIdentity) -> None:
    space, run_dir = who.space, who.run_dir
    recorded_space = reader.header.get("space", {})
    if recorded_space.get("name") != space.name:
        raise JournalError(
            f"journal in {run_dir} is from space '{recorded_space.get('name')}', not '{space.name}'"
        )
    if recorded_space.get("version") != space.version:
        raise JournalError(
            f"journal in {run_dir} is from {space.name} version "
            f"{recorded_space.get('version')}, this is version {space.version}"
        )
    diff = spec_differences(reader.header.get("spec"), who.spec, who.registry)
    if diff:
        python, cli = resume_advice(run_dir)
        raise advised(
            JournalError,
            f"journal in {run_dir} was made with different settings ({', '.join(diff)}); "
            "use another run directory, or continue it with {advice}",
            python=python,
            cli=cli,
        )
    check_recorded_data(reader.header.get("data"), who.data, run_dir)
    recorded_objective = (reader.header.get("objective") or {}).get("name")
    observed = who.evaluator.objective.name
    if recorded_objective is not None and recorded_objective != observed:
        raise JournalError(
            f"journal in {run_dir} was made observing '{recorded_objective}', but evaluator "
            f"'{who.evaluator.name}' now observes '{observed}' (its defaults "
            "changed), so its trials cannot be replayed; start a new run"
        )


def _check_mode(reader: JournalReader, who: RunIdentity) -> None:
    """A journal replays only in the mode it was written in: an asynchronous one's tells
    interleave with its asks in an order only its ask numbers give."""
    recorded = reader.header.get(EVALUATION_KEY) == ASYNCHRONOUS
    if recorded != who.asynchronous:
        how = "asynchronously" if recorded else "synchronously"
        python, cli = resume_advice(who.run_dir)
        raise advised(
            JournalError,
            f"journal in {who.run_dir} was evaluated {how}, so it only continues that way "
            "({advice} keeps its mode)",
            python=python,
            cli=cli,
        )
    if recorded and any(number is None for number in reader.asked):
        raise JournalError(f"{reader.path}: a trial of an asynchronous run lacks its '{ASKED_KEY}'")


def journal_is_asynchronous(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` (if any) was evaluated asynchronously."""
    try:
        if is_unstarted(journal_path(run_dir)):
            return False
        return JournalReader(journal_path(run_dir)).header.get(EVALUATION_KEY) == ASYNCHRONOUS
    except JournalError:
        return False  # reading it again in run() reports what is wrong


def describe_ask(text: str, fidelity: int | None) -> str:
    return text if fidelity is None else f"{text} at fidelity {fidelity}"


def check_replayed(space: SearchSpace, asked: Ask, old: Trial, where: str) -> None:
    """Refuse a journal whose trial at ``where`` is not what the strategy asked: another
    search (seed, workers or code) wrote it."""
    g, fidelity = split(asked)
    if (old.genotype, old.fidelity) != (g, fidelity):
        raise JournalError(
            f"journal diverges at {where}: the strategy asked "
            f"{describe_ask(space.format(g), fidelity)}, the journal holds "
            f"{describe_ask(space.format(old.genotype), old.fidelity)} (different seed or code?)"
        )

"""Where a genotype comes from: a genotype string, a safetensors file or a run directory.

The CLI's ``export``, ``inspect`` and ``score`` and plugin commands (``darts-train``,
``insight``) all take a genotype this way, and Python callers can too: one resolver, so
a run directory means the same best (or Pareto member) everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.genotype import Genotype, GenotypeJsonError
from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.space_source import check_source, is_source, split
from nasforge.run.advice import worded
from nasforge.run.goal_checks import goal_of_header
from nasforge.run.journal_file import JournalReader
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.export.genotype_file import load_genotype, read_metadata, read_space_options
from nasforge.tools.export.path_probe import PathKind, probe_path

#: How a Python caller and the command line name the settings these refusals mention.
MEMBER = ("member", "--member")
SPACE_EXAMPLE = ("space= (e.g. space='nb201')", "--space (e.g. --space nb201)")


#: Characters of the genotype strings of the first-party spaces that a path rarely holds
#: (NAS-Bench-201's ``|op~0|+...``, DARTS's ``Genotype(normal=[...])``).
_GENOTYPE_MARKS = frozenset("|~()[]'\"")


def looks_like_a_path(source: str) -> bool:
    """Whether ``source`` reads as a path rather than a genotype string: it has a directory
    separator and none of the marks of a genotype string (``runs/does-not-exist``)."""
    return ("/" in source or os.sep in source) and not _GENOTYPE_MARKS.intersection(source)


def resolve_genotype(
    source: str, space_name: str | None, registry: Registry | None = None, *, member: int | None = None
) -> tuple[SearchSpace, Genotype]:
    """A genotype from a string, a .safetensors file or a run directory (its best, or
    member ``member`` of a multi-objective run's Pareto front, counted from 0 as printed).

    Whether ``source`` is a path is asked of the filesystem, and a string it cannot even
    stat (longer than a file name may be, as every DARTS genotype is) is not a path.
    Spaces come from ``registry`` (the command's; the process-wide default if None).
    """
    registry = registry if registry is not None else get_registry()
    kind = probe_path(source)
    if kind is PathKind.DIRECTORY:
        return _from_run(Path(source), space_name, registry, member)
    if member is not None:
        raise worded(
            NasforgeError,
            "{member} picks a member of a run's Pareto front: give a run directory",
            member=MEMBER,
        )
    if kind is PathKind.MISSING and looks_like_a_path(source) and Path(source).suffix != ".safetensors":
        raise NasforgeError(
            f"no such run directory or genotype file: {source} (a genotype string has no '/'; "
            "a run directory is what `nasforge search` printed first)"
        )
    if kind is PathKind.FILE or Path(source).suffix == ".safetensors":
        g = load_genotype(source)
        return space_of_file(source, g, space_name, registry), g
    if space_name is None:
        raise worded(NasforgeError, "a genotype string needs {space}", space=SPACE_EXAMPLE)
    space = registry.get("space", space_name)()
    return space, space.parse(source)


def space_of_file(path: str, g: Genotype, space_name: str | None, registry: Registry) -> SearchSpace:
    """The space of the genotype ``g`` read from file ``path``: ``space_name`` if given, else
    the one the file names; made with the options the file records where it is the file's
    space, and checked to hold ``g``."""
    name = space_name or _named_in(path, g.space, registry)
    if space_name is None and is_source(name) and not Path(split(name)[0]).is_file():
        raise worded(
            NasforgeError,
            f"the space of {path} was declared in {split(name)[0]}, which is not there; give "
            "{space} where the file is now",
            space=("space='PATH.py:NAME'", "--space PATH.py:NAME"),
        )
    cls = registry.get("space", name)
    options = read_space_options(read_metadata(path), path) if getattr(cls, "name", None) == g.space else {}
    try:
        space: SearchSpace = cls(**options)
    except NasforgeError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the space's constructor raises, one line
        shown = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise NasforgeError(
            f"{path}: space '{name}' cannot be made with the options the file records ({shown}): "
            f"{_first_line(exc)}"
        ) from exc
    space.validate(g)
    return space


def _named_in(path: str, name: str, registry: Registry) -> str:
    """The space a genotype file names: its registered name, else the file it was declared
    in where the file recorded one (a space given as ``--space PATH.py:NAME``)."""
    if registry.has("space", name):
        return name
    return read_metadata(path).get("space_source") or name


@attrs.frozen
class RunNetwork:
    """What a run's networks were built for, as its journal header records it: the shape
    of one example of its data (None: a run without data, e.g. on a benchmark table), its
    classes, and the network options its evaluator built with."""

    example_shape: tuple[int, ...] | None = None
    num_classes: int | None = None
    build_options: dict[str, object] = attrs.field(factory=dict)


def run_network(source: str) -> RunNetwork:
    """What the run in directory ``source`` built its networks for, so that an export of its
    best is the network the run evaluated, on the data it searched on: the evaluator's own
    options where it records them (short-train: the data's channels and classes and
    ``--build-option``), else the spec's ``--build-option``; the data's example shape and
    classes. Empty for anything else (a string, a file)."""
    if probe_path(source) is not PathKind.DIRECTORY:
        return RunNetwork()
    try:
        header = JournalReader.of_run(Path(source)).header
    except (OSError, NasforgeError):
        return RunNetwork()  # the genotype's own resolution says what is wrong, in one line
    spec = header.get("spec")
    options = spec.get("build_options") if isinstance(spec, dict) else None
    build = dict(options) if isinstance(options, dict) else {}
    evaluator = header.get("evaluator")
    built = evaluator.get("build") if isinstance(evaluator, dict) else None
    if isinstance(built, dict):
        build = {**built, **build}
    recorded = header.get("data")
    data: dict[str, object] = recorded if isinstance(recorded, dict) else {}
    shape = data.get("shape")
    example = tuple(int(d) for d in shape) if isinstance(shape, list) and shape else None
    classes = data.get("classes", build.get("num_classes"))
    return RunNetwork(example, classes if isinstance(classes, int) else None, build)


def run_build_options(source: str) -> dict[str, object]:
    """The network options the run in directory ``source`` built with (:func:`run_network`)."""
    return run_network(source).build_options


def _from_run(
    run_dir: Path, space_name: str | None, registry: Registry, member: int | None = None
) -> tuple[SearchSpace, Genotype]:
    """The best genotype of a run (or a front member); a journal lacking what it should
    hold is one line, not a crash."""
    try:
        reader = JournalReader.of_run(run_dir)
    except OSError as exc:
        raise JournalError(f"cannot read the journal of {run_dir}: {exc.strerror or exc}") from exc
    try:
        recorded = reader.header["space"]
        if space_name is None and "spec" in reader.header:  # the space as the run made it, options too
            check_source(recorded, run_dir=run_dir)
            space = ExperimentSpec.from_json(reader.header["spec"]).build_space(registry)
        else:
            space = registry.get("space", space_name or recorded["name"])()
        if member is not None:
            return space, _member_of(space, reader, member)
        return space, _best_of(space, reader)
    except GenotypeJsonError as exc:  # the record's own damage, named with its file
        raise JournalError(f"{reader.path}: malformed header or end record ({exc})") from exc
    except NasforgeError:
        raise
    except KeyError as exc:
        raise JournalError(f"{reader.path}: a header or end record lacks the key {exc}") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise JournalError(f"{reader.path}: malformed header or end record ({_first_line(exc)})") from exc


def _best_of(space: SearchSpace, reader: JournalReader) -> Genotype:
    """The run's declared best if it finished, else the best feasible trial so far (under
    the run's objectives and constraints)."""
    if reader.end is not None and "best" in reader.end:
        best = Genotype.from_json(reader.end["best"])
    elif not reader.trials:
        raise NasforgeError(f"{reader.path} holds no finished trial")
    elif reader.header.get("mode") == "one-shot":
        best = _one_shot_best(reader)
    else:
        goal = _goal(reader)
        trial = goal.best(reader.trials) if goal is not None else None
        if goal is None or trial is None or not goal.feasible(trial.result):
            wanted = goal.describe() if goal is not None else "its objective"
            raise NasforgeError(f"{reader.path}: no trial so far satisfies {wanted}")
        best = trial.genotype
    space.validate(best)
    return best


def _one_shot_best(reader: JournalReader) -> Genotype:
    """An unfinished one-shot run: by the evaluator's objective where its trials carry it,
    else its latest derived architecture."""
    from nasforge.kernel.result import Objective, best_trial

    if reader.header.get("objective"):
        best = best_trial(reader.trials, Objective(**reader.header["objective"]))
        assert best is not None  # the caller checked the run has trials
        return best.genotype
    return reader.trials[-1].genotype


def _goal(reader: JournalReader) -> SearchGoal | None:
    try:
        return goal_of_header(reader.header)
    except JournalError as exc:
        raise JournalError(f"{reader.path}: {exc}") from exc


def _member_of(space: SearchSpace, reader: JournalReader, member: int) -> Genotype:
    """Member ``member`` of the run's Pareto front, as ``nasforge search`` printed it
    (recomputed from the trials, so an unfinished run has its front so far)."""
    goal = _goal(reader)
    if goal is None or not goal.multi_objective:
        raise worded(
            NasforgeError,
            f"{{member}} picks a member of a multi-objective run's front; {reader.path} has one objective",
            member=MEMBER,
        )
    front = goal.front(reader.trials)
    if not 0 <= member < len(front):
        raise worded(
            NasforgeError,
            f"{{member}} {member}: the front of {reader.path.parent} has {len(front)} members"
            + (f" (0..{len(front) - 1})" if front else ""),
            member=MEMBER,
        )
    g = front[member].genotype
    space.validate(g)
    return g


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

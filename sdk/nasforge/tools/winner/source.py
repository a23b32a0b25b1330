"""What ``nasforge train`` trains: an architecture, the network options it was searched
with, and (for a run directory) the data and seed the search used.

A run directory gives its best (or member K of a multi-objective run's Pareto front), the
space as the run built it (with its options), the network options its evaluator built
every candidate with (``--build-option``, short-train's ``build``), the run's seed and
the training data it named, with the digest its journal recorded so that data which
changed since is refused. A genotype file or string gives the architecture alone: the
data must then be named.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.errors import JournalError, NasforgeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.run.builtin_datasets.data_paths import refuse_link_loop
from nasforge.run.journal_file import JournalReader
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.export import resolve_genotype
from nasforge.tools.export.path_probe import PathKind, probe_path


@attrs.frozen(eq=False)
class WinnerSource:
    """The architecture to train and what its search recorded about it."""

    space: SearchSpace
    genotype: Genotype
    #: How the user would name where it came from ("the best of run runs/x").
    origin: str
    run_dir: Path | None = None
    #: Network options the search built candidates with (empty for a genotype file).
    build_options: dict[str, Any] = attrs.field(factory=dict)
    #: The run's seed (0 for a genotype file).
    seed: int = 0
    #: The training data the run named (a dataset name or an absolute path), if any.
    train_data: str | None = None
    #: The digest of that data the journal recorded (None: not recorded).
    data_digest: str | None = None

    @property
    def text(self) -> str:
        return self.space.format(self.genotype)


def resolve_source(
    source: str | os.PathLike[str],
    registry: Registry,
    *,
    space_name: str | None = None,
    member: int | None = None,
) -> WinnerSource:
    """The architecture ``source`` names: a run directory (its best, or front member
    ``member``), a ``.safetensors`` genotype file, or a genotype string (with ``space_name``)."""
    text = os.fspath(source)
    refuse_link_loop(text)
    space, g = resolve_genotype(text, space_name, registry, member=member)
    if BUILD not in space.capabilities:
        raise NasforgeError(f"space '{space.name}' cannot build a network to train")
    if probe_path(text) is not PathKind.DIRECTORY:
        kind = "a genotype file" if probe_path(text) is PathKind.FILE else "a genotype string"
        origin = f"{text} ({kind})" if kind.endswith("file") else kind
        return WinnerSource(space, g, origin)
    return _from_run(Path(text), space, g, registry, member)


def _from_run(
    run_dir: Path, space: SearchSpace, g: Genotype, registry: Registry, member: int | None
) -> WinnerSource:
    reader = JournalReader.of_run(run_dir)
    header = reader.header
    origin = f"the best of run {run_dir}" if member is None else f"member {member} of run {run_dir}'s front"
    try:
        spec = ExperimentSpec.from_json(header.get("spec"))
    except NasforgeError as exc:
        raise JournalError(f"{reader.path}: {exc}") from exc
    if spec.space == space.name:  # the space as the run made it (its options too)
        space = spec.build_space(registry)
        space.validate(g)
    recorded = (header.get("evaluator") or {}).get("build")
    options = dict(recorded) if isinstance(recorded, dict) else dict(spec.build_options)
    found = header.get("data")
    data: dict[str, Any] = found if isinstance(found, dict) else {}
    return WinnerSource(
        space,
        g,
        origin,
        run_dir=run_dir,
        build_options=options,
        seed=spec.seed,
        train_data=_trained_on(spec, registry),
        data_digest=data.get("digest"),
    )


def _trained_on(spec: ExperimentSpec, registry: Registry) -> str | None:
    """The data the run's networks trained on: its evaluator's dataset where that evaluator
    trains, else a one-shot search's training data; None for a run on a benchmark table."""
    if spec.is_one_shot(registry):
        return spec.train_data
    if spec.evaluator is not None and spec.evaluator_trains(registry):
        return spec.evaluator_dataset(registry)
    return None

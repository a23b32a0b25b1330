"""The Python face of ``nasforge export``: what to export, checked once, and what was written.

:func:`export` takes what the command takes (a genotype string, a ``.safetensors``
genotype, a run directory, or a :class:`~nasforge.Genotype`), makes every check and
refusal the command makes, with one message (the settings it names spelled as a Python
caller gives them here, as flags on the command line: :func:`nasforge.run.advice.worded`),
and returns what the command prints. A run that found an ensemble is exported as
``nasforge search --export`` exports it. :mod:`nasforge.api` is the name to import it by.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.run.advice import worded
from nasforge.run.ensemble_training import EpochCallback
from nasforge.tools.export.bundle import ExportBundle, data_network_options, export_bundle
from nasforge.tools.export.ensemble_export import EnsembleExport
from nasforge.tools.export.genotype_source import MEMBER, RunNetwork, resolve_genotype, run_network
from nasforge.tools.export.input_shape import DEFAULT_INPUT_SHAPE
from nasforge.tools.export.input_shape import input_shape as checked_input_shape
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL
from nasforge.tools.export.path_probe import PathKind, probe_path
from nasforge.tools.export.run_ensemble import (
    EPOCHS,
    RunEnsemble,
    check_train_epochs,
    export_run_ensemble,
    run_ensemble,
)

#: How each face names the settings a refusal mentions: (Python, command line).
_MEMBER = MEMBER
_TRAIN_EPOCHS = EPOCHS
_NO_ONNX = ("onnx=False", "--no-onnx")
_TOLERANCE = {"tolerance": ("tolerance", "--tolerance"), "rtol": ("rtol", "--rtol")}

#: Hears that members start training: the data, how many members, epochs each.
TrainingStart = Callable[[TensorData, int, int], None]


@attrs.frozen
class GenotypeExport:
    """One genotype written: its file and (where the space builds) its checked ONNX model."""

    space: SearchSpace
    genotype: Genotype
    bundle: ExportBundle
    #: The network options it was built with (the data's channels and classes included).
    build_options: dict[str, Any] = attrs.field(factory=dict)
    member: int | None = None
    #: The example input it was traced with (``N, C, H, W``): a run's data's, else the default.
    input_shape: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, object]:
        """What was written, as ``nasforge export --json`` prints it."""
        result: dict[str, object] = {
            "genotype": str(self.bundle.genotype_file),
            "text": self.space.format(self.genotype),
        }
        if self.build_options:
            result["build"] = dict(self.build_options)
        if self.member is not None:
            result["member"] = self.member
        if self.input_shape is not None:
            result["input_shape"] = list(self.input_shape)
        report = self.bundle.onnx
        if report is not None:
            result.update(
                onnx=str(report.path),
                max_abs_diff=report.max_abs_diff,
                max_rel_error=report.max_rel_error,
                tolerance=report.tolerance,
                rtol=report.rtol,
                tolerance_used=report.tolerance_used,
                parity=report.verdict(),
                seconds=round(report.seconds, 3),
            )
        return result


@attrs.frozen
class RunEnsembleExport:
    """A run's ensemble written: manifest, one ONNX per member, the fused graph."""

    run: RunEnsemble
    written: EnsembleExport
    #: The data the members were trained on; None when they were exported untrained.
    data: TensorData | None
    train_epochs: int = 0

    def to_json(self) -> dict[str, object]:
        """What was written, as ``nasforge export --json`` prints it for an ensemble run."""
        ens, written = self.run.ensemble, self.written
        result: dict[str, object] = {
            "ensemble_dir": str(written.directory),
            "manifest": str(written.manifest),
            "members": [str(p) for p in written.members],
            "fused": None if written.fused is None else str(written.fused),
            "method": ens.method,
            "combine": ens.combine,
            "weights": "untrained"
            if self.data is None
            else f"trained {self.train_epochs} epochs on {self.data.name}",
            "max_abs_diff": written.max_abs_diff,
            "seconds": round(written.seconds, 3),
        }
        if self.data is not None:
            result["train_examples"] = len(self.data)
        return result


def export(
    source: str | os.PathLike[str] | Genotype,
    out: str | os.PathLike[str] = "export",
    *,
    space: str | None = None,
    onnx: bool = True,
    input_shape: str | Sequence[int] | None = None,
    build_options: Mapping[str, Any] | None = None,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    member: int | None = None,
    train_epochs: int = 0,
    fuse: bool = True,
    device: str = "cpu",
    on_training: TrainingStart | None = None,
    on_epoch: EpochCallback | None = None,
    registry: Registry | None = None,
) -> GenotypeExport | RunEnsembleExport:
    """Write a genotype as safetensors and its network as ONNX, checked with onnxruntime
    (the Python twin of ``nasforge export``); both files appear together or not at all.

    ``source``: a genotype string (with ``space``), a ``.safetensors`` genotype, a run
    directory (its best; of a multi-objective run ``member`` K of its Pareto front, from
    0 as printed) or a :class:`~nasforge.Genotype`. A run's own network options come
    first, ``build_options`` over them; ``input_shape`` (``N, C, H, W``, as numbers or
    ``"1,3,32,32"``) is the example input the network is traced with (default: a run's
    data, its channels and classes deciding the network's, else 1, 3, 32, 32).
    ``tolerance`` and ``rtol`` bound the accepted difference between torch and onnxruntime.

    A run that found an ensemble is written as ``nasforge search --export`` writes it
    (manifest, member ONNX files, and the fused graph with ``fuse``), its members trained
    from scratch for ``train_epochs`` epochs on the run's data first (0: untrained) on
    ``device``; ``on_training(data, members, epochs)`` hears that training starts,
    ``on_epoch(member, epoch, log)`` each epoch. ``member`` K exports that member alone.
    """
    registry = registry if registry is not None else get_registry()
    shape = checked_input_shape(input_shape) if input_shape is not None else None
    check_train_epochs(train_epochs)
    _check_tolerances(tolerance=tolerance, rtol=rtol)
    found = (
        run_ensemble(source, registry, space)
        if not isinstance(source, Genotype) and probe_path(os.fspath(source)) is PathKind.DIRECTORY
        else None
    )
    if found is None and train_epochs:
        raise worded(
            NasforgeError,
            "{epochs} trains the members of an ensemble run: give such a run directory",
            epochs=_TRAIN_EPOCHS,
        )
    if found is not None and member is None:
        return _export_ensemble(
            found, out, onnx, shape, build_options, tolerance, rtol, train_epochs, fuse, device,
            on_training, on_epoch, registry,
        )  # fmt: skip
    if found is not None and member is not None:
        sp, g = found.space, _member(found, member, train_epochs)
        if shape is None and found.input_shape is not None:
            shape = (1, *found.input_shape)
    elif isinstance(source, Genotype):
        sp, g = _of_genotype(source, space, member, registry)
    else:
        sp, g = resolve_genotype(os.fspath(source), space, registry, member=member)
    if onnx and BUILD not in sp.capabilities:
        raise worded(
            NasforgeError,
            f"space '{sp.name}' cannot build a network to export: use {{no_onnx}}",
            no_onnx=_NO_ONNX,
        )
    # a run's own network and data first (what its search built, for what), the caller's over them
    run = RunNetwork() if isinstance(source, Genotype) else run_network(os.fspath(source))
    build = {**run.build_options, **dict(build_options or {})}
    if shape is None and run.example_shape is not None:
        shape = (1, *run.example_shape)
    shape = shape or DEFAULT_INPUT_SHAPE
    bundle = export_bundle(
        g,
        out,
        sp,
        input_shape=shape,
        num_classes=run.num_classes,
        build_options=build,
        onnx=onnx,
        tolerance=tolerance,
        rtol=rtol,
    )
    built_with = data_network_options(sp, shape, run.num_classes, build) if onnx else build
    return GenotypeExport(sp, g, bundle, built_with, member, shape)


def _export_ensemble(
    found: RunEnsemble,
    out: str | os.PathLike[str],
    onnx: bool,
    shape: tuple[int, ...] | None,
    build_options: Mapping[str, Any] | None,
    tolerance: float,
    rtol: float,
    train_epochs: int,
    fuse: bool,
    device: str,
    on_training: TrainingStart | None,
    on_epoch: EpochCallback | None,
    registry: Registry,
) -> RunEnsembleExport:
    """A run's whole ensemble, its members trained first with ``train_epochs``."""
    if not onnx:
        raise worded(
            NasforgeError,
            "an ensemble export is ONNX files: {no_onnx} applies to one member ({member} K)",
            no_onnx=_NO_ONNX,
            member=_MEMBER,
        )
    if BUILD not in found.space.capabilities:
        raise NasforgeError(f"space '{found.space.name}' cannot build the members' networks to export")
    members = len(found.ensemble)

    def heard(data: TensorData) -> None:
        if on_training is not None:
            on_training(data, members, train_epochs)

    written, data = export_run_ensemble(
        found,
        out,
        registry,
        train_epochs=train_epochs,
        input_shape=shape,
        build_options=dict(build_options or {}),
        fuse=fuse,
        tolerance=tolerance,
        rtol=rtol,
        device=device,
        on_data=heard,
        on_epoch=on_epoch,
    )
    return RunEnsembleExport(found, written, data, train_epochs)


def _member(found: RunEnsemble, member: int, train_epochs: int) -> Genotype:
    """Member ``member`` of a run's ensemble, exported alone (and so not trained)."""
    if train_epochs:
        raise worded(
            NasforgeError,
            "{epochs} trains the whole ensemble: drop {member}",
            epochs=_TRAIN_EPOCHS,
            member=_MEMBER,
        )
    size = len(found.ensemble)
    if not 0 <= member < size:
        raise worded(
            NasforgeError,
            f"{{member}} {member}: the ensemble of {found.run_dir} has {size} members (0..{size - 1})",
            member=_MEMBER,
        )
    return found.ensemble.members[member]


def _of_genotype(
    g: Genotype, space: str | None, member: int | None, registry: Registry
) -> tuple[SearchSpace, Genotype]:
    """A genotype given as a value, with its space (its own unless ``space`` names one)."""
    if member is not None:
        raise worded(
            NasforgeError,
            "{member} picks a member of a run's Pareto front: give a run directory",
            member=_MEMBER,
        )
    sp = registry.get("space", space or g.space)()
    sp.validate(g)
    return sp, g


def _check_tolerances(**bounds: float) -> None:
    """The parity bounds: non-negative numbers (0 asks for exact agreement)."""
    for name, value in bounds.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise worded(
                OptionError, f"{{name}} must be a number of at least 0, got {value!r}", name=_TOLERANCE[name]
            )


__all__ = ["DEFAULT_INPUT_SHAPE", "GenotypeExport", "RunEnsembleExport", "TrainingStart", "export"]

"""Export the ensemble a run found, from its directory, with its members trained or not.

An ensemble search (NESBS) ends in several architectures; ``nasforge export RUN_DIR``
must write what ``nasforge search --export`` writes for it (manifest, one ONNX per
member, the fused graph), not only the best member. A search does not train its members
from scratch (the thesis's stage E is separate), so untrained members are the default,
as for a single export; ``train_epochs`` trains each member on the run's own training
data first (:func:`nasforge.kernel.ensemble.train_members`), which is what one deploys. The data
are reloaded by name with the run's seed and must have the digest the journal recorded,
so a member is never trained on other data than the search saw.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import JournalError, NasforgeError, OptionError
from nasforge.kernel.registry import Registry
from nasforge.kernel.search_space import SearchSpace
from nasforge.run.advice import worded
from nasforge.run.ensemble_training import EpochCallback, MemberRecipe, train_members
from nasforge.run.journal_file import JournalReader
from nasforge.tools.export.bundle import data_network_options
from nasforge.tools.export.ensemble_export import EnsembleExport, export_ensemble
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL

#: How a Python caller and the command line name the epochs of training members.
EPOCHS = ("train_epochs", "--train-epochs")


@attrs.frozen
class RunEnsemble:
    """The ensemble a finished run recorded, its space, and what it searched on."""

    run_dir: Path
    space: SearchSpace
    ensemble: Ensemble
    header: dict[str, Any] = attrs.field(repr=False)

    @property
    def input_shape(self) -> tuple[int, ...] | None:
        """The shape of one example of the run's data (``[C, H, W]``), as journaled."""
        shape = (self.header.get("data") or {}).get("shape")
        return tuple(int(d) for d in shape) if isinstance(shape, list) and shape else None

    def load_data(self, registry: Registry, *, check: bool = True) -> TensorData:
        """The run's training data, reloaded with its seed; with ``check``, other data than
        the run saw (another digest) is refused, since members trained on it would not be
        the run's."""
        from nasforge.run.spec import ExperimentSpec

        spec = ExperimentSpec.from_json(self.header.get("spec"))
        data = spec.load_train_data(registry)
        if data is None:
            raise NasforgeError(f"run {self.run_dir} names no training data to train its members on")
        recorded = (self.header.get("data") or {}).get("digest")
        if check and recorded is not None and data.digest() != recorded:
            raise NasforgeError(
                f"dataset '{data.name}' now loads other data (digest {data.digest()}) than run "
                f"{self.run_dir} searched on ({recorded}): its members cannot be trained as searched"
            )
        return data


def run_ensemble(
    run_dir: str | os.PathLike[str], registry: Registry, space_name: str | None = None
) -> RunEnsemble | None:
    """The ensemble the run in ``run_dir`` recorded in its end record; None for a run
    that found one architecture (or has not finished)."""
    from nasforge.run.one_shot_run import recorded_ensemble

    run_dir = Path(run_dir)
    try:
        reader = JournalReader.of_run(run_dir)
    except OSError as exc:
        raise JournalError(f"cannot read the journal of {run_dir}: {exc.strerror or exc}") from exc
    ensemble = recorded_ensemble(reader.end, reader.path)
    if ensemble is None:
        return None
    try:
        recorded = reader.header["space"]
        name = space_name or recorded.get("source") or recorded["name"]
    except (KeyError, TypeError) as exc:
        raise JournalError(f"{reader.path}: the header names no space") from exc
    space = registry.get("space", name)()
    for g in ensemble.members:
        space.validate(g)
    return RunEnsemble(run_dir, space, ensemble, dict(reader.header))


def export_run_ensemble(
    run: RunEnsemble,
    out: str | os.PathLike[str],
    registry: Registry,
    *,
    train_epochs: int = 0,
    input_shape: tuple[int, ...] | None = None,
    build_options: dict[str, Any] | None = None,
    fuse: bool = True,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    device: str = "cpu",
    on_data: Callable[[TensorData], None] | None = None,
    on_epoch: EpochCallback | None = None,
) -> tuple[EnsembleExport, TensorData | None]:
    """Write ``run``'s ensemble to ``out`` as :func:`export_ensemble` does.

    The members are built for the run's data (its channels and classes; ``input_shape``,
    ``N, C, H, W``, defaults to the journaled one), ``build_options`` winning. With
    ``train_epochs`` > 0 each member is first trained from scratch on the run's training
    data (:class:`~nasforge.kernel.ensemble.MemberRecipe` with those epochs, member ``i`` from
    seed ``run seed + i``); ``on_data`` hears the data once loaded (to size a progress
    bar), ``on_epoch`` every epoch. Returns the export and the data trained on (None
    when untrained).
    """
    check_train_epochs(train_epochs)
    if train_epochs > 0:
        data: TensorData | None = run.load_data(registry)
    else:  # only its shape and classes are needed: a dataset that no longer loads is no error
        try:
            data = run.load_data(registry, check=False)
        except NasforgeError:
            data = None
    if data is not None:
        shape = (1, *data.input_shape)
        num_classes: int | None = data.num_classes
    else:
        shape = (1, *run.input_shape) if run.input_shape else (1, 3, 32, 32)
        num_classes = None
    if input_shape is not None:
        shape = input_shape
    options = data_network_options(run.space, shape, num_classes, build_options)
    models = None
    if data is not None and train_epochs > 0:
        if on_data is not None:
            on_data(data)
        seed = int((run.header.get("spec") or {}).get("seed") or 0)
        models = train_members(
            run.ensemble,
            run.space,
            data,
            recipe=MemberRecipe(epochs=train_epochs),
            build_options=options,
            seed=seed,
            device=device,
            on_epoch=on_epoch,
        )
        models = [m.cpu() for m in models]
    written = export_ensemble(
        run.ensemble,
        out,
        run.space,
        models=models,
        input_shape=shape,
        build_options=options,
        fuse=fuse,
        tolerance=tolerance,
        rtol=rtol,
    )
    return written, (data if train_epochs > 0 else None)


def check_train_epochs(train_epochs: int) -> None:
    """Epochs of training members: a whole number, 0 for untrained members."""
    if isinstance(train_epochs, bool) or not isinstance(train_epochs, int) or train_epochs < 0:
        raise worded(
            OptionError,
            f"{{epochs}} must be a whole number of at least 0, got {train_epochs!r}",
            epochs=EPOCHS,
        )

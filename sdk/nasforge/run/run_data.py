"""A run's training data: how a spec names it, what the journal records, what a resume checks.

A spec names the data networks train on by one string: a registered dataset
(``mnist1d``), the path of the user's own file or image folder (made absolute, so a
resume from another directory finds it), or, for arrays handed to the Python API, an
in-memory name (``memory:NAME``) whose data the caller passes again to resume. The
journal header records the data's name, digest and sample shape; a resume loads the data
again and refuses, in one line, data whose digest differs (an edited file, other
arrays), since the journal's trials were measured on what was recorded.

Named apart from :mod:`nasforge.kernel.datasets` (data as the contracts see it) and
:mod:`nasforge.run.builtin_datasets` (the core's own datasets): this module holds a run's
choice of data and its record.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from nasforge.kernel.datasets import ComponentLookup, TensorData, is_data_path, load_dataset
from nasforge.kernel.errors import JournalError, NasforgeError, UnknownNameError
from nasforge.run.builtin_datasets.data_paths import absolute_data_path
from nasforge.run.builtin_datasets.user_arrays import DataError, user_data

_log = logging.getLogger("nasforge.data")
#: Seconds of loading after which a run says it is loading its data.
SAY_LOADING_AFTER = 2.0

#: How a spec names data given in memory to the Python API.
IN_MEMORY = "memory:"


def is_in_memory(name: str | None) -> bool:
    return name is not None and name.startswith(IN_MEMORY)


def as_training_data(value: Any) -> tuple[str | None, TensorData | None]:
    """The Python API's ``train_data``: a dataset name or a path (str or path object), a
    :class:`TensorData`, a mapping with ``x``, ``y`` (optional ``x_test``, ``y_test``,
    ``num_classes``) or an ``(x, y)`` pair of arrays or tensors.

    Returns the name the spec records and, for data in memory, the data (checked as a
    tensor file is: labels, shapes, finite values).
    """
    if value is None or isinstance(value, str):
        return value, None
    if isinstance(value, os.PathLike):
        return os.fspath(value), None
    if isinstance(value, TensorData):
        checked = user_data(
            {"x": value.x, "y": value.y, "num_classes": value.num_classes},
            name=value.name,
            where=f"train_data {value.name!r}",
        )
        return IN_MEMORY + value.name, checked.train
    if isinstance(value, Mapping):
        arrays = dict(value)
    elif isinstance(value, tuple | list) and len(value) == 2:
        arrays = {"x": value[0], "y": value[1]}
    else:
        raise DataError(
            f"train_data must be a dataset name, a path, a TensorData, (x, y) or a mapping with x and y; "
            f"got a {type(value).__name__}"
        )
    return IN_MEMORY + "arrays", user_data(arrays, name="arrays", where="train_data").train


def spec_name(name: str | None, registry: ComponentLookup) -> str | None:
    """``name`` as a spec records it: a path that is no registered dataset made absolute
    (``~`` expanded; a symbolic link loop is refused in one line), anything else unchanged."""
    if name is None or is_in_memory(name):
        return name
    try:
        registry.get("dataset", name)
        return name
    except UnknownNameError:
        if not is_data_path(name):
            raise
    return str(absolute_data_path(name))


def load_training_data(
    name: str, *, registry: ComponentLookup, seed: int, given: TensorData | None = None
) -> TensorData:
    """The data ``name`` names: ``given`` where the caller holds it (data in memory), else
    loaded by name or path with the run's ``seed``."""
    if given is not None:
        return given
    if is_in_memory(name):
        raise NasforgeError(
            f"the run trained on data given in memory ({name}): resume it from Python with "
            "nasforge.api.resume(RUN_DIR, train_data=...) and the same data"
        )
    # generating MNIST-1D or reading a folder of images takes a while: say so if it does,
    # but not before a refusal of bad data, which stays the one line on stderr
    said = threading.Timer(SAY_LOADING_AFTER, _log.info, ("loading the training data %s ...", name))
    said.daemon = True
    said.start()
    try:
        return load_dataset(name, registry=registry, seed=seed)
    finally:
        said.cancel()


def data_record(data: TensorData) -> dict[str, Any]:
    """What a journal header records of the data a run trains on."""
    return {
        "name": data.name,
        "digest": data.digest(),
        "shape": list(data.input_shape),
        # what an export of the run's architecture is built for (older journals lack it)
        "classes": data.num_classes,
    }


def check_recorded_data(recorded: Any, data: TensorData | None, run_dir: Any) -> None:
    """Refuse to continue a journal on other data than it recorded (older journals, which
    record none, and runs without training data are not checked)."""
    if data is None or not isinstance(recorded, dict) or "digest" not in recorded:
        return
    digest = data.digest()
    if recorded["digest"] != digest:
        raise JournalError(
            f"journal in {run_dir} was made on other data: '{recorded.get('name')}' had digest "
            f"{recorded['digest']}, the data now loads with digest {digest} (edited or replaced); "
            "start a new run"
        )

"""The OneShotStrategy interface: weight-sharing and gradient-based methods, and what they share.

These do not fit ask/tell: they train a supernet and read an architecture off it. What
every such method needs of the run it is part of lives here, once: the training data (an
instance, or a dataset name looked up in the run's registry), its reproducible split into
the weights' and the architecture's parts, the device (checked before any work), and a
progress bar on the run's console.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

import attrs
import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nasforge.kernel.datasets import TensorData, load_dataset
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.option_types import config_from_options
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SearchSpace

_Config = TypeVar("_Config")

#: The one-shot strategies' progress bar: what, how far, how long, and a field ``info``.
PROGRESS_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
    TextColumn("{task.fields[info]}"),
)


class OneShotStrategy(abc.ABC):
    """Weight-sharing and gradient-based methods (DARTS, PR-DARTS, NASI, NESBS).

    The contract the CLI, the journal and the conformance kit rely on:

    - built by a run as ``cls(seed=..., **options)`` with JSON-valued options, plus the
      run-context fields it declares (:mod:`nasforge.kernel.run_context`): ``progress``, ``registry``
      and ``device`` (``--device``, an option of its settings) are the usual ones
      (``context_fields = OneShotStrategy.context_fields | {"progress", "registry",
      "device"}``); a run may set ``console`` for the bar;
    - ``fit(space, data, *, on_trial=None, **options)`` takes a
      :class:`~nasforge.kernel.datasets.TensorData`, calls ``on_trial(trial)`` once per epoch (or
      per step of its own choosing) with a :class:`~nasforge.kernel.result.Trial` whose genotype
      is the architecture derived so far, and returns a
      :class:`~nasforge.kernel.outcome.SearchOutcome` whose ``best`` is the final architecture;
    - the same seed and data give the same outcome.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    context_fields: ClassVar[frozenset[str]] = frozenset({"seed"})

    def __init__(
        self,
        *,
        seed: int = 0,
        progress: bool = True,
        registry: Registry | None = None,
        console: Console | None = None,
        **options: Any,
    ) -> None:
        """``registry`` resolves a dataset named in ``fit`` (the process-wide one if None);
        ``console`` is where the bar is drawn (the run's own may set it later)."""
        self.seed = seed
        self.progress = progress
        self.registry = registry
        self.console = console
        self.options = dict(options)

    @abc.abstractmethod
    def fit(
        self,
        space: SearchSpace,
        data: Any,
        *,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        """Run the search and return its outcome."""

    # --- what every one-shot method needs of the run ----------------------------------
    def training_data(self, data: Any, *, seed: int | None = None) -> TensorData:
        """``data`` as given when a :class:`TensorData`; a dataset name loaded through the
        strategy's registry with ``seed`` (default: the strategy's); anything else refused
        in one line naming the strategy."""
        if isinstance(data, TensorData):
            return data
        if isinstance(data, str):
            registry = self.registry if self.registry is not None else get_registry()
            return load_dataset(data, registry=registry, seed=self.seed if seed is None else seed)
        raise NasforgeError(
            f"{self.name} needs training data: a TensorData or a dataset name, got {type(data).__name__}"
        )

    def search_splits(
        self, data: Any, fraction: float, *, seed: int | None = None
    ) -> tuple[TensorData, TensorData]:
        """(the weights' part, the architecture's part) of ``data``: a ``(train, valid)`` pair
        as given, else :meth:`training_data` split reproducibly, ``fraction`` for the weights."""
        if isinstance(data, tuple) and len(data) == 2 and all(isinstance(d, TensorData) for d in data):
            return data
        whole = self.training_data(data, seed=seed)
        if len(whole) < 2:
            raise NasforgeError(f"{self.name} needs at least two samples to split its data")
        return whole.split(fraction, seed=self.seed if seed is None else seed)

    def device(self, name: str | torch.device | None) -> torch.device:
        """The device ``name`` (cpu, cuda, cuda:N), or a one-line error where it is not here."""
        try:
            return resolve_device(name)
        except (ValueError, RuntimeError) as exc:
            raise OptionError(f"bad {self.name} option device={str(name)!r}: {exc}") from exc

    def progress_bar(self) -> Progress:
        """A bar on the run's console (none when ``progress`` is off); add a task with an
        ``info`` field and use it as a context manager."""
        return Progress(*PROGRESS_COLUMNS, console=self.console, disable=not self.progress, transient=False)


def config_with_device(cls: type[_Config], options: dict[str, Any], *, owner: str) -> _Config:
    """A method's frozen settings from its flat options (:func:`config_from_options`), its
    ``device`` checked and written out (``cuda`` without CUDA fails here, in one line, not
    inside the first batch)."""
    config = config_from_options(cls, options, owner=owner)
    device = getattr(config, "device")  # noqa: B009 - any settings class with a device field
    try:
        resolved = resolve_device(device)
    except (ValueError, RuntimeError) as exc:
        raise NasforgeError(f"bad {owner} option device={device!r}: {exc}") from exc
    return attrs.evolve(config, device=str(resolved))  # type: ignore[misc]


def one_shot_strategy(registry: Registry, name: str) -> type[OneShotStrategy]:
    """The one-shot strategy class registered as ``name`` in ``registry``, typed (the
    registry's own accessors give the other kinds; this one lives beside its contract,
    which the registry must not import)."""
    return cast("type[OneShotStrategy]", registry.checked("strategy", name, OneShotStrategy))

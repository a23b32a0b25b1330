"""The ``nasi`` one-shot strategy: NASI-FIX / NASI-ADA on any supported supernet.

``Nasi(seed=..., **options).fit(space, data)`` builds the space's supernet from the seed,
chooses the space's relaxation, runs Algorithm 1 and returns a SearchOutcome whose
``produced_by`` holds the full NASI record. ``data`` is a TensorData (what a run hands
over), a dataset name (looked up in the registry the strategy was constructed with), or
None for data-agnostic runs (``inputs="gaussian"`` with ``input_shape`` and
``num_classes``). The option ``device`` (cpu, cuda, cuda:N) places the supernet and
every batch; an unavailable device is refused when the strategy is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch

from nasforge.kernel.datasets import network_options
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import OneShotStrategy, config_with_device
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet, supernet_option_names
from nasforge_nasi.batches import ProxyBatches
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.search import run_nasi
from nasforge_nasi.supernet_relaxation import relaxation_for


class Nasi(OneShotStrategy):
    """NASI (Shu et al. 2022): NTK-trace search at initialisation, no training.

    Constructed as ``Nasi(seed=..., **options)`` (how ``nasforge search`` builds one-shot
    strategies); ``fit`` may override any option. Options are :class:`NasiConfig` fields.
    """

    name: ClassVar[str] = "nasi"
    requires: ClassVar[frozenset[str]] = frozenset({SUPERNET})
    #: Built with the run's seed, bar setting, registry (a dataset named in ``fit``) and
    #: device (an option of its settings).
    context_fields = OneShotStrategy.context_fields | {"progress", "registry", "device"}

    def __init__(
        self, *, seed: int = 0, progress: bool = False, registry: Registry | None = None, **options: Any
    ) -> None:
        """``registry`` resolves a dataset named in ``fit`` (default: the process-wide one)."""
        super().__init__(seed=seed, progress=progress, registry=registry, **options)
        make_config({**self.options, "seed": seed})  # bad options fail here, before any work

    def fit(
        self,
        space: SearchSpace,
        data: Any = None,
        *,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        """Search ``space``; every sampled architecture becomes a Trial (objectives: its
        proxy Θ̃, its penalised objective R and ν), handed to ``on_trial`` at once."""
        space.require(self.requires, by=f"strategy '{self.name}'")
        config = make_config({"seed": self.seed, **self.options, **options})
        dataset = None if data is None else self.training_data(data, seed=config.seed)  # None: data-agnostic
        generator = torch.Generator().manual_seed(config.seed)
        batches = ProxyBatches(
            dataset,
            batch_size=config.batch_size,
            generator=generator,
            inputs=config.inputs,
            labels=config.labels,
            input_shape=config.input_shape,
            num_classes=config.num_classes,
        )
        supernet_options = supernet_defaults(space, config, batches)
        # θ₀ is drawn once, from the seed (PyTorch's default init; our choice), by this call alone
        # (not torch's global generator)
        supernet = seeded_build(lambda: space.supernet(**supernet_options), config.seed)
        relaxation = relaxation_for(as_supernet(supernet, by=f"strategy '{self.name}'"), config)
        trials: list[Trial] = []
        bar = self.progress_bar()
        task = bar.add_task("nasi samples", total=config.steps, info="")

        def record(step: int, g: Genotype, proxy: float, nu: float, r: float, seconds: float) -> None:
            result = Result(objectives={"proxy": proxy, "objective": r, "nu": nu}, cost=seconds)
            trial = Trial(index=step, genotype=g, result=result, wall_seconds=seconds)
            trials.append(trial)
            bar.update(task, advance=1, info=f"proxy={proxy:.4g} nu={nu:.4g}")
            if on_trial is not None:
                on_trial(trial)

        with bar:
            run = run_nasi(supernet, relaxation, batches, config, generator, on_step=record)
        result = Result(
            objectives={"mean_proxy": sum(run.proxies) / len(run.proxies), "nu": run.nus[-1]},
            cost=run.seconds,
            metadata={"mode": config.mode, "fallback": run.fallback},
        )
        return SearchOutcome(
            best=run.genotype,
            best_result=result,
            history=tuple(trials),
            produced_by={
                "strategy": self.name,
                "space": space.name,
                "config": config.to_json(),
                "supernet": supernet_options,
                "data": None if dataset is None else dataset.name,
                "run": run.to_json(),
            },
        )


def make_config(options: dict[str, Any]) -> NasiConfig:
    """A NasiConfig from user options, with unknown or bad options as one-line errors."""
    return config_with_device(NasiConfig, options, owner="nasi")


def supernet_defaults(space: SearchSpace, config: NasiConfig, batches: ProxyBatches) -> dict[str, Any]:
    """The user's supernet options, with classes and input channels taken from the data
    where the space's supernet accepts them (so digits' 1x8x8 works with no options)."""
    opts = dict(config.supernet)
    inferred = network_options(
        batches.input_shape, batches.num_classes, accepted=supernet_option_names(space)
    )
    for key, value in inferred.items():
        opts.setdefault(key, value)
    return opts

"""The ``nesbs`` one-shot strategy: an ensemble of architectures by Bayesian sampling (thesis ch. 5).

``Nesbs(seed=..., **options).fit(space, data)`` builds the space's supernet from the seed,
reads its decisions off the supernet contract (any space that implements it, NAS-Bench-201
and DARTS included), runs Algorithm 5.1 and returns a SearchOutcome whose outcome is an
ensemble:

- ``members``: the n member genotypes, in the order sampled (duplicates possible);
- ``best``: the member whose own supernet loss is lowest (what single-architecture tools
  such as ``--export`` and evaluators take);
- ``best_result``: the ensemble's estimated NLL and error on the selection split, and its
  members' mean;
- ``ensemble``: a :class:`nasforge.kernel.ensemble.Ensemble` of the members, uniform weights, the
  combine rule, each member's selection scores and the ensemble's own (also, as JSON, under
  ``produced_by["ensemble_outcome"]`` and ``best_result.metadata``, for older readers);
- ``history``: one trial per supernet epoch (the last path trained), per posterior epoch
  (the posterior's mode), per member of every candidate ensemble, and per final member (stage "final"),
  each with ``metadata["stage"]``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, ClassVar

from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.ensemble import ENSEMBLE_KEY, Ensemble
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import OneShotStrategy, config_with_device
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet, supernet_option_names
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding, Assignment
from nasforge_nesbs.posterior_fit import REPORTS
from nasforge_nesbs.search import NesbsRun, run_nesbs
from nasforge_nesbs.supernet_quality import SupernetQuality, build_options_for, check_supernet

log = logging.getLogger("nasforge.nesbs")

#: Stages whose trials advance the bar (a candidate ensemble advances it once, by its first member).
_STEPS = {"supernet", "posterior"}


class Nesbs(OneShotStrategy):
    """NESBS (Shu et al., UAI 2022): supernet, posterior, MC or SVGD-RD sampling, selection.

    Options are :class:`NesbsConfig` fields (``-o ensemble_size=3 -o sampler=mc ...``).
    """

    name: ClassVar[str] = "nesbs"
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
        self.run: NesbsRun | None = None  # the last search, for callers that want everything

    def fit(
        self,
        space: SearchSpace,
        data: Any = None,
        *,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        space.require(self.requires, by=f"strategy '{self.name}'")
        config = make_config({"seed": self.seed, **self.options, **options})
        dataset = self.training_data(data, seed=config.seed)
        supernet_options = supernet_defaults(space, config, dataset)
        supernet = seeded_build(lambda: space.supernet(**supernet_options), config.seed)
        encoding = ArchEncoding(as_supernet(supernet, by=f"strategy '{self.name}'"))
        trials: list[Trial] = []
        bar = self.progress_bar()
        candidates = config.iterations * (len(config.deltas()) if config.sampler == "svgd-rd" else 1)
        total = supernet_reports(config, dataset) + posterior_reports(config, dataset) + candidates
        task = bar.add_task("nesbs", total=total, info="")

        def record(stage: str, a: Assignment, objectives: dict[str, float], meta: dict[str, Any]) -> None:
            trial = Trial(
                index=len(trials),
                genotype=encoding.genotype(a),
                result=Result(objectives=objectives, metadata={"stage": stage, **meta}),
            )
            trials.append(trial)
            if stage in _STEPS or (stage == "candidate" and meta.get("member") == 0):
                first = next(iter(objectives.items()))
                bar.update(task, advance=1, info=f"{stage} {first[0]}={first[1]:.4g}")
            if on_trial is not None:
                on_trial(trial)

        with bar:
            run = run_nesbs(supernet, encoding, dataset, config, on_stage=record)
        self.run = run
        quality = self._quality(space, encoding, run, dataset, config, supernet_options)
        members = tuple(encoding.genotype(a) for a in run.members)
        for i, (a, scores) in enumerate(zip(run.members, run.member_scores, strict=True)):
            record(
                "final",
                a,
                {"member_nll": scores["nll"], "member_error": scores["error"]},
                {"member": i, "weight": 1.0 / len(members)},
            )
        ensemble = make_ensemble(members, run, config)
        ensemble_doc = ensemble.to_json([space.format(g) for g in members])
        for i, (g, s) in enumerate(zip(members, run.member_scores, strict=True)):
            log.info(
                "NESBS member %d/%d: %s (supernet NLL %.4f, error %.2f %%)",
                i + 1,
                len(members),
                space.format(g),
                s["nll"],
                s["error"],
            )
        best_i = min(range(len(members)), key=lambda i: (run.member_scores[i]["nll"], i))
        n = len(members)
        result = Result(
            objectives={
                "ensemble_nll": run.ensemble_scores["nll"],
                "ensemble_error": run.ensemble_scores["error"],
                "mean_member_nll": sum(s["nll"] for s in run.member_scores) / n,
                "mean_member_error": sum(s["error"] for s in run.member_scores) / n,
            },
            cost=sum(run.seconds.values()),
            metadata={ENSEMBLE_KEY: ensemble_doc},
        )
        return SearchOutcome(
            best=members[best_i],
            best_result=result,
            history=tuple(trials),
            members=members,
            produced_by={
                "strategy": self.name,
                "space": space.name,
                "config": config.to_json(),
                "supernet": supernet_options,
                "data": dataset.name,
                ENSEMBLE_KEY: ensemble_doc,
                "run": run.to_json(),
                **({} if quality is None else {"supernet_quality": quality.to_json()}),
            },
            ensemble=ensemble,
        )

    def _quality(
        self,
        space: SearchSpace,
        encoding: ArchEncoding,
        run: NesbsRun,
        dataset: TensorData,
        config: NesbsConfig,
        supernet_options: dict[str, Any],
    ) -> SupernetQuality | None:
        """The supernet check (``quality_check`` architectures trained from scratch on the
        supernet's split), or None when it is off."""
        if config.quality_check == 0 or run.predictor is None:
            return None
        train, _ = dataset.split(config.split, seed=config.seed)
        return check_supernet(
            space,
            encoding,
            run.predictor,
            train,
            count=config.quality_check,
            epochs=config.quality_epochs,
            seed=config.seed,
            build_options=build_options_for(space, supernet_options),
            device=config.device,
        )


def supernet_reports(config: NesbsConfig, data: TensorData) -> int:
    """How many supernet epochs a search journals (its progress bar's share)."""
    train = int(round(config.split * len(data)))  # as TensorData.split cuts
    return config.supernet_schedule(config.batches_per_epoch(train))[0]


def posterior_reports(config: NesbsConfig, data: TensorData) -> int:
    """How many posterior trials a search journals (its progress bar's share)."""
    if config.sampler == "uniform":
        return 0
    if config.posterior_epochs is not None:
        return config.posterior_epochs
    selection = len(data) - int(round(config.split * len(data)))  # as TensorData.split cuts
    epochs = math.ceil(config.posterior_steps / config.batches_per_epoch(selection))
    return math.ceil(epochs / max(1, math.ceil(epochs / REPORTS)))


def make_ensemble(members: tuple[Genotype, ...], run: NesbsRun, config: NesbsConfig) -> Ensemble:
    """The chosen ensemble as the core's value: uniform weights (§5.2), the configured combine
    rule, each member's scores and the ensemble's own, all with supernet-inherited weights on
    the selection split."""
    return Ensemble(
        members=members,
        combine=config.combine,
        scores=[{"member_nll": s["nll"], "member_error": s["error"]} for s in run.member_scores],
        objectives={
            "ensemble_nll": run.ensemble_scores["nll"],
            "ensemble_error": run.ensemble_scores["error"],
        },
        method="nesbs",
    )


def make_config(options: dict[str, Any]) -> NesbsConfig:
    """A NesbsConfig from user options, with unknown or bad options as one-line errors."""
    return config_with_device(NesbsConfig, options, owner="nesbs")


def supernet_defaults(space: SearchSpace, config: NesbsConfig, data: TensorData) -> dict[str, Any]:
    """The user's supernet options, classes and input channels taken from the data where accepted."""
    opts = dict(config.supernet)
    for key, value in network_options(
        data.input_shape, data.num_classes, accepted=supernet_option_names(space)
    ).items():
        opts.setdefault(key, value)
    return opts

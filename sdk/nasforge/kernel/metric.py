"""The Metric interface: a training-free score of an untrained network on one batch.

Importing it does not import torch (an ask/tell service or a listing needs the contract,
not the arithmetic): torch loads when a metric scores, or when :data:`Batch`, the
``(inputs, labels)`` tensor pair, is first looked up.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

if TYPE_CHECKING:
    import torch
    from torch import nn

    Batch = tuple[torch.Tensor, torch.Tensor]


@attrs.frozen
class MetricInfo:
    """What a metric needs and how its numbers read; used by scorers and reports."""

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    higher_is_better: bool = True
    needs_labels: bool = True
    needs_data: bool = True
    #: "keep": score with BatchNorm as built; "remove": metric strips BN (e.g. synflow).
    bn: str = attrs.field(default="keep", validator=attrs.validators.in_(("keep", "remove")))
    #: Scores span orders of magnitude; plots and aggregations should use log10.
    log_scale: bool = False
    #: Scores only exist relative to a population (rank ensembles); ``score`` on one
    #: network raises a NasforgeError that says how to score a population instead.
    population: bool = False
    description: str = ""
    #: The sign the scores can take: "nonnegative" (a magnitude: norms, traces, counts),
    #: "nonpositive" (e.g. a negated sum of logs) or "any". A consumer that reads a metric
    #: as a magnitude (HNAS's M, taken as |M| as its thesis does) refuses "nonpositive"
    #: metrics, whose |M| would rank in reverse.
    sign: str = attrs.field(
        default="any", validator=attrs.validators.in_(("nonnegative", "nonpositive", "any"))
    )
    #: The version of the metric's numbers: bump it whenever a change to the metric (or to
    #: code only it uses) changes the scores it returns, so that score caches, which key by
    #: name and version, stop serving the old numbers. A free-form non-empty string.
    version: str = attrs.field(
        default="1", validator=[attrs.validators.instance_of(str), attrs.validators.min_len(1)]
    )


@attrs.frozen
class MetricContext:
    """Settings shared by every metric in one scoring call."""

    device: str = "cpu"
    num_classes: int = 10
    #: A metric that needs random numbers draws them from its own generator seeded with
    #: this (``nasforge.kernel.seeding.seeded_generator(ctx.seed)``): scorers never seed torch's
    #: global generator, which other threads share.
    seed: int = 0
    #: Samples per torch.func chunk; halved automatically on out-of-memory.
    chunk_size: int = 64
    loss: str = attrs.field(default="cross_entropy", validator=attrs.validators.in_(("cross_entropy", "mse")))


class Metric(abc.ABC):
    """Score an untrained network; the model is the caller's and may be modified.

    A scorer builds it as ``cls()`` plus the run-context fields it declares in
    ``context_fields`` (:mod:`nasforge.kernel.run_context`; a metric made of other metrics
    declares ``registry``). Its ``name`` is ``info.name``; the registry refuses a metric
    whose two names differ.
    """

    info: ClassVar[MetricInfo]
    #: Set from ``info.name`` for every subclass, so registries can read it off the class;
    #: a subclass that sets another keeps it, and the registry refuses the pair.
    name: ClassVar[str]
    context_fields: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if isinstance(info, MetricInfo) and "name" not in cls.__dict__:
            cls.name = info.name

    @abc.abstractmethod
    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        """One number for ``model`` on ``batch``; NaN/inf are allowed and flagged upstream."""


class PopulationMetric(Metric):
    """A metric whose value for one network only exists within a population (rank
    ensembles). The scorer computes its ``members`` per network, then calls
    :meth:`aggregate` once over the whole table."""

    #: The per-network metrics this one is built from (scored first by the scorer).
    members: tuple[Metric, ...] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if isinstance(info, MetricInfo) and not info.population:
            raise TypeError(f"{cls.__name__}.info must set population=True")

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        from nasforge.kernel.errors import NasforgeError

        raise NasforgeError(
            f"metric '{self.info.name}' ranks a population; score several genotypes with "
            "nasforge.tools.scoring.score_genotypes (or `nasforge score`) instead"
        )

    @abc.abstractmethod
    def aggregate(self, columns: Mapping[str, Sequence[Any]], infos: Mapping[str, MetricInfo]) -> Any:
        """This metric's column (row-aligned) from the members' columns of scores."""


def __getattr__(name: str) -> Any:
    if name == "Batch":  # made on first use: the alias needs torch, the contract does not
        import torch

        globals()["Batch"] = batch = tuple[torch.Tensor, torch.Tensor]
        return batch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""A rank-aggregated ensemble of metrics, defined over a population of architectures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from nasforge.metric import Metric, MetricInfo, PopulationMetric
from nasforge.registry import Registry
from nasforge.scoring import MetricScore, aggregate_ranks, metric_label

#: Abdelfattah et al.'s "vote" members: their three strongest NAS-Bench-201 proxies.
DEFAULT_MEMBERS = ("synflow", "jacob_cov", "snip")


class RankEnsemble(PopulationMetric):
    """Mean normalised rank of the member metrics across the scored architectures.

    Ranks because proxies live on incomparable scales (TE-NAS's rank sum; the zero-cost
    "vote" is its pairwise-majority cousin). A flagged member score ranks worst for that
    member. A rank only exists within a population, so this metric has no value for one
    network: the scorer (``nasforge.scoring.score_genotypes``) fills it from its
    members' columns; ``score`` alone raises a NasforgeError.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ensemble",
        population=True,
        description="mean normalised rank of member metrics (population)",
        version="1",
    )

    def __init__(
        self, members: Sequence[str | Metric] = DEFAULT_MEMBERS, *, registry: Registry | None = None
    ) -> None:
        """``members`` named here are this plugin's metrics or ones of ``registry``: the
        caller's, which the scorer hands over (``nasforge.scoring.resolve_metrics``) so a
        member only the caller's registry knows is found. Without one, ``make_metric``
        decides (the process-wide registry, for a direct Python caller)."""
        if not members:
            raise ValueError("an ensemble needs at least one member metric")
        from nasforge_zerocost.catalogue import make_metric

        self.members: tuple[Metric, ...] = tuple(
            make_metric(m, registry=registry) if isinstance(m, str) else m for m in members
        )

    @property
    def variant(self) -> str:
        labels = tuple(metric_label(m) for m in self.members)
        return "" if labels == DEFAULT_MEMBERS else "+".join(labels)

    def aggregate(
        self, columns: Mapping[str, Sequence[MetricScore]], infos: Mapping[str, MetricInfo]
    ) -> np.ndarray:
        """The ensemble column from the members' columns (row-aligned)."""
        cols, directions = [], []
        for m in self.members:
            label = metric_label(m)
            cols.append([s.value if s.ok else np.nan for s in columns[label]])
            directions.append(infos[label].higher_is_better)
        if not cols[0]:
            return np.zeros(0)
        return aggregate_ranks(cols, directions)

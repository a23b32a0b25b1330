"""Ensembles of metrics over a population of architectures: mean rank and the pairwise vote.

Abdelfattah et al.'s "vote" (their 0.817 on NAS-Bench-201 CIFAR-10, the "0.82" of their
abstract) is not a rank correlation: it is the share of ordered architecture pairs whose
accuracy order the majority sign of synflow, jacob_cov and snip gets right (their
``nasbench201_correlations.ipynb``), a Kendall-like agreement on a 0.5 (chance) to 1
scale. :func:`vote_agreement` computes exactly that statistic, so a comparison with 0.817
is like for like; :class:`VoteEnsemble` turns the same pairwise majority into a score per
architecture (its share of majority wins), so a search can rank by the vote; and
:class:`RankEnsemble` is the mean normalised rank, which is nasforge's own ensemble.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from nasforge.kernel.metric import Metric, MetricInfo, PopulationMetric
from nasforge.kernel.registry import Registry
from nasforge.tools.scoring import MetricScore, aggregate_ranks, metric_label, oriented

#: Abdelfattah et al.'s "vote" members: their three strongest NAS-Bench-201 proxies.
DEFAULT_MEMBERS = ("synflow", "jacob_cov", "snip")
#: Rows of the pairwise comparison per block: bounds memory at block x n per member.
_BLOCK = 512


def _majority_says_greater(cols: np.ndarray, rows: slice) -> np.ndarray:
    """``[i, j]``: the published majority rule, at least half of the members scoring
    ``i`` strictly above ``j`` (a tie or a flagged pair counts as no vote for ``i``)."""
    with np.errstate(invalid="ignore"):  # -inf - -inf (two flagged scores) is NaN: no vote
        votes = sum((c[rows, None] - c[None, :] > 0).astype(np.int32) for c in cols)
    return votes >= len(cols) / 2


def vote_agreement(columns: Sequence[ArrayLike], directions: Sequence[bool], targets: ArrayLike) -> float:
    """The zero-cost "vote": the share of ordered pairs (i, j), i ≠ j, with different
    targets, whose target order the members' majority sign gets right.

    Follows the reference notebook: pairs with equal targets are skipped, a pair is
    called "i better" when at least half of the members score i strictly higher, and
    otherwise "j better" (so a pair every member ties is called for j). Members are
    direction-corrected first and flagged scores (NaN, inf) rank worst, as everywhere in
    nasforge. With one member it is the pairwise ordering accuracy of that metric.
    """
    if len(columns) != len(directions) or not columns:
        raise ValueError("need one direction per column and at least one column")
    cols = np.stack([oriented(c, d) for c, d in zip(columns, directions, strict=True)])
    t = np.asarray(targets, dtype=np.float64).ravel()
    if cols.shape[1] != t.size:
        raise ValueError(f"length mismatch: {cols.shape[1]} scores vs {t.size} targets")
    right = total = 0
    for start in range(0, t.size, _BLOCK):
        rows = slice(start, start + _BLOCK)
        diff = t[rows, None] - t[None, :]
        says = np.where(_majority_says_greater(cols, rows), 1.0, -1.0)
        counted = diff != 0
        right += int(np.count_nonzero(counted & (says * diff > 0)))
        total += int(np.count_nonzero(counted))
    return right / total if total else float("nan")


def _member_columns(
    members: Sequence[Metric], columns: Mapping[str, Sequence[MetricScore]], infos: Mapping[str, MetricInfo]
) -> tuple[list[list[float]], list[bool]]:
    cols, directions = [], []
    for m in members:
        label = metric_label(m)
        cols.append([s.value if s.ok else np.nan for s in columns[label]])
        directions.append(infos[label].higher_is_better)
    return cols, directions


class RankEnsemble(PopulationMetric):
    """Mean normalised rank of the member metrics across the scored architectures.

    Ranks because proxies live on incomparable scales (TE-NAS's rank sum). A flagged
    member score ranks worst for that member. Not the zero-cost paper's "vote" (that is
    :class:`VoteEnsemble`, and its published 0.817 is :func:`vote_agreement`, not a
    Spearman). A rank only exists within a population, so this metric has no value for
    one network: the scorer (``nasforge.tools.scoring.score_genotypes``) fills it from its
    members' columns; ``score`` alone raises a NasforgeError.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ensemble",
        population=True,
        sign="nonnegative",
        description="mean normalised rank of member metrics (population)",
        version="1",
    )
    #: Members named resolve through the run's registry.
    context_fields = frozenset({"registry"})

    def __init__(
        self, members: Sequence[str | Metric] = DEFAULT_MEMBERS, *, registry: Registry | None = None
    ) -> None:
        """``members`` named here are this plugin's metrics or ones of ``registry``: the
        caller's, which the scorer hands over (``nasforge.tools.scoring.resolve_metrics``) so a
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
        cols, directions = _member_columns(self.members, columns, infos)
        if not cols[0]:
            return np.zeros(0)
        return aggregate_ranks(cols, directions)


class VoteEnsemble(RankEnsemble):
    """Each architecture's share of the others it beats by the members' majority vote.

    The zero-cost paper's pairwise vote (``vote_agreement``'s rule: at least half of
    synflow, jacob_cov and snip scoring it strictly higher) turned into one score per
    architecture, a Copeland count scaled to [0, 1], so a search or a ranking can use the
    vote. Its Spearman is not the published 0.817: that number is the vote's pairwise
    agreement with accuracy (:func:`vote_agreement`), which the validation script prints
    beside it. O(n²) comparisons per population, in blocks.
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="ensemble_vote",
        population=True,
        sign="nonnegative",
        description="share of pairwise majority-vote wins of member metrics (population)",
        version="1",
    )

    def aggregate(
        self, columns: Mapping[str, Sequence[MetricScore]], infos: Mapping[str, MetricInfo]
    ) -> np.ndarray:
        cols, directions = _member_columns(self.members, columns, infos)
        n = len(cols[0])
        if n < 2:
            return np.ones(n)
        oriented_cols = np.stack([oriented(c, d) for c, d in zip(cols, directions, strict=True)])
        wins = np.zeros(n)
        for start in range(0, n, _BLOCK):
            rows = slice(start, start + _BLOCK)
            says = _majority_says_greater(oriented_cols, rows)
            idx = np.arange(start, min(n, start + _BLOCK))
            says[idx - start, idx] = False  # no architecture beats itself
            wins[rows] = says.sum(axis=1)
        return wins / (n - 1)

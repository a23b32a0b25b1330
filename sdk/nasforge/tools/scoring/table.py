"""Scores of many genotypes under many metrics, as one immutable table."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from nasforge.kernel.converters import to_dict, to_tuple
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import MetricInfo
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.ranking import rank_order


@attrs.frozen
class ScoreTable:
    """Row i holds the scores of ``genotypes[i]``, keyed by metric label."""

    genotypes: tuple[Genotype, ...] = attrs.field(converter=to_tuple)
    metrics: tuple[str, ...] = attrs.field(converter=to_tuple)
    infos: dict[str, MetricInfo] = attrs.field(converter=to_dict)
    rows: tuple[dict[str, MetricScore], ...] = attrs.field(converter=to_tuple)
    #: How the batch was made (dataset name, size, seed, content hash).
    data: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)

    def __attrs_post_init__(self) -> None:
        if len(self.rows) != len(self.genotypes):
            raise ValueError("one row of scores per genotype")
        missing = [m for m in self.metrics if m not in self.infos]
        if missing:
            raise ValueError(f"no MetricInfo for {missing}")

    def column(self, metric: str) -> list[MetricScore]:
        return [row[metric] for row in self.rows]

    def values(self, metric: str) -> np.ndarray:
        """Raw values (flagged ones as they came: NaN/inf; errors as NaN)."""
        return np.array([s.value if s.error is None else np.nan for s in self.column(metric)])

    def flagged(self, metric: str) -> list[int]:
        return [i for i, s in enumerate(self.column(metric)) if not s.ok]

    def ranking(self, metric: str) -> list[Genotype]:
        """Genotypes from best to worst by ``metric``; flagged ones last."""
        order = rank_order(self.values(metric), self.infos[metric].higher_is_better)
        return [self.genotypes[i] for i in order]

    def unbuilt(self) -> list[tuple[int, str]]:
        """(row, the build's error) of each genotype whose network could not be built."""
        out = []
        for i, row in enumerate(self.rows):
            failed = [s for s in row.values() if s.unbuilt]
            if failed:
                out.append((i, failed[0].error or ""))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "metrics": list(self.metrics),
            "data": self.data,
            "rows": [
                {"genotype": g.to_json(), "scores": {m: row[m].to_json() for m in self.metrics}}
                for g, row in zip(self.genotypes, self.rows, strict=True)
            ],
        }

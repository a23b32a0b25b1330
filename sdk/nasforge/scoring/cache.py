"""A disk cache of scores keyed by genotype, metric, seed and data hash.

A metric's score on an untrained network is a pure function of the architecture, the
metric and its settings, the initialisation seed, the batch and the build options, so a
rerun of ``nasforge correlate`` on the same sample should cost nothing. Scores are kept
as JSON lines, one file per (metric, seed, data, build): appends are cheap, a killed
sweep loses at most its last line, and the files are readable with ``jq``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import attrs

from nasforge.genotype import Genotype
from nasforge.scoring.outcome import MetricScore


@attrs.frozen
class ScoreKey:
    """Everything a cached score depends on besides the genotype."""

    metric: str = attrs.field(validator=attrs.validators.min_len(1))
    seed: int
    data: str = attrs.field(validator=attrs.validators.min_len(1))
    build: str = ""

    def shard(self) -> str:
        text = json.dumps([self.metric, self.seed, self.data, self.build])
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.metric)[:40]
        return f"{safe}-{digest}.jsonl"


def _genotype_key(g: Genotype) -> str:
    return json.dumps(g.to_json(), sort_keys=True, separators=(",", ":"))


class ScoreCache:
    """Scores on disk under ``directory``; only successful or NaN/inf scores are kept.

    Exceptions are not cached: they may be transient (out of memory) and should be
    retried on the next run.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._shards: dict[str, dict[str, MetricScore]] = {}

    def _load(self, key: ScoreKey) -> dict[str, MetricScore]:
        name = key.shard()
        if name not in self._shards:
            table: dict[str, MetricScore] = {}
            path = self.directory / name
            if path.exists():
                for line in path.read_text().splitlines():
                    try:
                        rec = json.loads(line)
                        table[rec["genotype"]] = MetricScore.from_json(rec["score"])
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line of a killed run
            self._shards[name] = table
        return self._shards[name]

    def get(self, key: ScoreKey, g: Genotype) -> MetricScore | None:
        hit = self._load(key).get(_genotype_key(g))
        return None if hit is None else attrs.evolve(hit, cached=True)

    def put(self, key: ScoreKey, g: Genotype, score: MetricScore) -> None:
        if score.error is not None:
            return
        table = self._load(key)
        gk = _genotype_key(g)
        table[gk] = score
        self.directory.mkdir(parents=True, exist_ok=True)
        record: dict[str, Any] = {"genotype": gk, "key": attrs.asdict(key), "score": score.to_json()}
        with open(self.directory / key.shard(), "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def __len__(self) -> int:
        """Number of cached records on disk (all shards)."""
        if not self.directory.exists():
            return 0
        return sum(len(p.read_text().splitlines()) for p in self.directory.glob("*.jsonl"))

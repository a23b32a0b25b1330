"""An append-only file of pool scores, so a pool is scored once per setting.

Pool pre-scoring is HNAS's dominant cost (thesis: a 60,000-architecture pool; here
seconds per network on a CPU). Scores depend only on the genotype and the scoring
settings (metric, kernel, batch, build options, init seed), never on the search seed,
so repeated searches, resumed runs and the multi-seed benchmark share one file. Each
line is one JSON record keyed by the settings digest and the genotype's text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nasforge_hnas.pool_metrics import PoolMetrics


class PoolCache:
    """Scores by (settings digest, genotype text); appends are flushed line by line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._entries: dict[tuple[str, str], PoolMetrics] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        rec = json.loads(line)
                        key = (rec["key"], rec["genotype"])
                        self._entries[key] = PoolMetrics(
                            float(rec["metric"]), float(rec["kappa"]), float(rec["seconds"])
                        )
                    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                        continue  # a torn last line from a killed run: rescore that one

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, genotype: str) -> PoolMetrics | None:
        return self._entries.get((key, genotype))

    def put(self, key: str, genotype: str, value: PoolMetrics) -> None:
        self._entries[(key, genotype)] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "key": key,
            "genotype": genotype,
            "metric": value.metric,
            "kappa": value.kappa,
            "seconds": value.seconds,
        }
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

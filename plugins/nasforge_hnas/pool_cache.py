"""An append-only file of pool scores, so a pool is scored once per setting.

Pool pre-scoring is HNAS's dominant cost (thesis: a 60,000-architecture pool; here
seconds per network on a CPU). Scores depend only on the genotype and the scoring
settings (metric, kernel, batch, build options, init seed), never on the search seed,
so repeated searches, resumed runs and the multi-seed benchmark share one file. Each
line is one JSON record keyed by the settings digest and the genotype's text.

Appends go through the journal's :class:`~nasforge.run.journal_file.JsonLinesAppender`: a line torn
by a kill or a full disk is cut before the next append (never glued onto), and appends
from concurrent runs sharing the file are serialised. The cache only saves time, so a
cache that cannot be written (disk full, read-only) warns once and the search goes on.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from nasforge.kernel.files import JsonLinesAppender
from nasforge_hnas.pool_metrics import PoolMetrics


class PoolCache:
    """Scores by (settings digest, genotype text); appends are flushed line by line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._entries: dict[tuple[str, str], PoolMetrics] = {}
        self._warned = False
        if self.path.exists():
            with open(self.path, encoding="utf-8", errors="replace") as fh:
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
                    except (KeyError, TypeError, ValueError, RecursionError):
                        continue  # a torn last line from a killed run: rescore that one

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, genotype: str) -> PoolMetrics | None:
        return self._entries.get((key, genotype))

    def put(self, key: str, genotype: str, value: PoolMetrics) -> None:
        self._entries[(key, genotype)] = value
        record = {
            "key": key,
            "genotype": genotype,
            "metric": value.metric,
            "kappa": value.kappa,
            "seconds": value.seconds,
        }
        try:
            with JsonLinesAppender(self.path, durable=False) as out:
                out.append(record)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"pool cache {self.path} not updated ({exc.strerror or exc}); scores are kept "
                    "in memory for this run only",
                    RuntimeWarning,
                    stacklevel=2,
                )

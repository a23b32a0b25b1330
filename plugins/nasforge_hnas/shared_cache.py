"""A pool's scores in the user's shared score cache, where a search keeps them by default.

HNAS's pool scores (M and κ of each candidate) are a pure function of the genotype and the
pool's settings, keyed by :func:`~nasforge_hnas.pool.pool_key` (the settings and the code
versions). With no ``cache`` file named, a search keeps them in the shared cache every
sweep uses (:func:`nasforge.tools.scoring.default_cache_dir`), with its locking, checksums
and merging of concurrent writers, so a second search with the same settings scores
nothing again. This is :class:`~nasforge_hnas.pool_cache.PoolCache`'s interface over it.
"""

from __future__ import annotations

from nasforge.kernel.search_space import SearchSpace
from nasforge.tools.scoring import MetricScore, ScoreCache, ScoreKey
from nasforge_hnas.pool_metrics import PoolMetrics

#: The two numbers of a candidate, each a column of the shared cache.
COLUMNS = ("hnas-pool-m", "hnas-pool-kappa")


class SharedPoolCache:
    """``get``/``put`` of pool scores by (pool key, genotype text) in a :class:`ScoreCache`."""

    def __init__(self, space: SearchSpace, cache: ScoreCache) -> None:
        self.space, self.cache = space, cache

    def _keys(self, key: str) -> tuple[ScoreKey, ScoreKey]:
        # the pool key already holds the settings, the seed and the code's versions
        return ScoreKey(COLUMNS[0], 0, key), ScoreKey(COLUMNS[1], 0, key)

    def get(self, key: str, genotype: str) -> PoolMetrics | None:
        g = self.space.parse(genotype)
        m_key, k_key = self._keys(key)
        m, kappa = self.cache.get(m_key, g), self.cache.get(k_key, g)
        if m is None or kappa is None:
            return None
        return PoolMetrics(m.value, kappa.value, m.seconds)

    def put(self, key: str, genotype: str, value: PoolMetrics) -> None:
        g = self.space.parse(genotype)
        m_key, k_key = self._keys(key)
        self.cache.put(m_key, g, MetricScore(COLUMNS[0], value.metric, value.seconds))
        self.cache.put(k_key, g, MetricScore(COLUMNS[1], value.kappa, 0.0))

    def flush(self) -> None:
        self.cache.flush()

"""A disk cache of scores that only serves numbers the running code would compute.

A metric's score on an untrained network is a pure function of the architecture, the
metric's code, the settings that change its numbers, the initialisation seed, the batch
and the build options, so a rerun of ``nasforge correlate`` on the same sample should cost
nothing. Everything in that list is in the key: the metric's label (name and variant)
*and its declared version* (``MetricInfo.version``, bumped when its numbers change), the
nasforge version (for fixes in shared code such as the passes and backends), the loss and
device type, the seed, the batch hash and the build options. A key that leaves something
out serves stale numbers after an upgrade, silently, forever.

Scores live as JSON lines (readable with ``jq``), one shard file per key, and the default
cache (``~/.cache/nasforge/scores``) is shared by every run of a user, possibly at once:

* a shard is only ever replaced whole (:mod:`nasforge.atomic_files`), so a reader sees the
  old file or the new one; a writer first merges what is on disk, so two sweeps on one
  cache lose nothing but, in a race, some of each other's newest scores (recomputed next
  time), never a record;
* every record carries its key and a checksum; a line that does not parse, belongs to
  another key or fails its checksum is ignored, and a shard that cannot be read at all
  counts as empty: damage costs recomputation, never a crash or a wrong number;
* writes are batched (every ``flush_every`` scores or ``flush_seconds``, and on
  :meth:`ScoreCache.flush`), so a sweep does not rewrite a shard per score; a killed
  sweep loses at most the scores since its last flush;
* a cache that cannot be written (read-only, disk full) warns once and the sweep goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any

import attrs

from nasforge.atomic_files import atomic_write_text
from nasforge.genotype import Genotype
from nasforge.scoring.outcome import MetricScore


def package_version() -> str:
    """nasforge's version, part of every key (imported late: nasforge imports this module)."""
    from nasforge import __version__

    return str(__version__)


@attrs.frozen
class ScoreKey:
    """Everything a cached score depends on besides the genotype."""

    metric: str = attrs.field(validator=attrs.validators.min_len(1))
    seed: int
    data: str = attrs.field(validator=attrs.validators.min_len(1))
    build: str = ""
    #: The metric's declared ``MetricInfo.version``.
    version: str = attrs.field(default="1", validator=attrs.validators.min_len(1))
    #: Scorer settings that change the numbers (loss, device type), as canonical JSON.
    settings: str = ""
    package: str = attrs.field(factory=package_version)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def shard(self) -> str:
        text = json.dumps(self.to_json(), sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.metric)[:40]
        return f"{safe}-{digest}.jsonl"


def _genotype_key(g: Genotype) -> str:
    return json.dumps(g.to_json(), sort_keys=True, separators=(",", ":"))


def _checksum(genotype: str, key: dict[str, Any], score: dict[str, Any]) -> str:
    text = json.dumps([genotype, key, score], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _record(genotype: str, key: ScoreKey, score: MetricScore) -> str:
    k, s = key.to_json(), score.to_json()
    return json.dumps({"genotype": genotype, "key": k, "score": s, "check": _checksum(genotype, k, s)})


def _parse(line: str, key: dict[str, Any]) -> tuple[str, MetricScore] | None:
    """``(genotype, score)`` of one intact record of ``key``, else None."""
    try:
        rec = json.loads(line)
        genotype, score = rec["genotype"], rec["score"]
        if rec["key"] != key or rec["check"] != _checksum(genotype, key, score):
            return None
        if not isinstance(genotype, str):
            return None
        return genotype, MetricScore.from_json(score)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _read_shard(path: Path, key: ScoreKey) -> dict[str, MetricScore]:
    """The intact records of a shard; a missing or unreadable shard is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    wanted = key.to_json()
    table: dict[str, MetricScore] = {}
    for line in text.splitlines():
        parsed = _parse(line, wanted)
        if parsed is not None:
            table[parsed[0]] = parsed[1]
    return table


class ScoreCache:
    """Scores on disk under ``directory``; only successful or NaN/inf scores are kept.

    Exceptions are not cached: they may be transient (out of memory) and should be
    retried on the next run. Call :meth:`flush` (or use the cache as a context manager)
    when done; :func:`~nasforge.scoring.score_genotypes` does.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, flush_every: int = 64, flush_seconds: float = 5.0
    ) -> None:
        self.directory = Path(directory)
        self.flush_every = flush_every
        self.flush_seconds = flush_seconds
        self._shards: dict[str, dict[str, MetricScore]] = {}
        self._keys: dict[str, ScoreKey] = {}
        self._dirty: set[str] = set()
        self._pending = 0
        self._last_flush = time.monotonic()
        self._warned = False

    def _load(self, key: ScoreKey) -> dict[str, MetricScore]:
        name = key.shard()
        if name not in self._shards:
            self._shards[name] = _read_shard(self.directory / name, key)
            self._keys[name] = key
        return self._shards[name]

    def get(self, key: ScoreKey, g: Genotype) -> MetricScore | None:
        hit = self._load(key).get(_genotype_key(g))
        return None if hit is None else attrs.evolve(hit, cached=True)

    def put(self, key: ScoreKey, g: Genotype, score: MetricScore) -> None:
        if score.error is not None:
            return
        self._load(key)[_genotype_key(g)] = attrs.evolve(score, cached=False)
        self._dirty.add(key.shard())
        self._pending += 1
        if self._pending >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write every shard with new scores, merged with what other writers put there."""
        try:
            for name in sorted(self._dirty):
                key = self._keys[name]
                merged = {**_read_shard(self.directory / name, key), **self._shards[name]}
                self.directory.mkdir(parents=True, exist_ok=True)
                lines = [_record(gk, key, score) for gk, score in merged.items()]
                atomic_write_text(self.directory / name, "".join(line + "\n" for line in lines))
                self._shards[name] = merged
                self._dirty.discard(name)
        except OSError as exc:  # a cache is an optimisation: the sweep's scores stand
            if not self._warned:
                warnings.warn(
                    f"score cache {self.directory} not written ({exc}); scores are not cached",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._warned = True
            self._dirty.clear()
        self._pending = 0
        self._last_flush = time.monotonic()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()

    def __len__(self) -> int:
        """Number of records on disk (all shards; damaged lines included)."""
        if not self.directory.exists():
            return 0
        total = 0
        for p in self.directory.glob("*.jsonl"):
            try:
                total += len(p.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
        return total

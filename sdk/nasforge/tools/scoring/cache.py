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

* a shard is only ever replaced whole (:mod:`nasforge.kernel.files`: write a sibling, then
  rename), so a reader sees the old file or the new one, never a torn one; a writer holds
  the shard's lock file (``flock``, where the platform has it) while it reads what is on
  disk, merges its own scores in and renames, so concurrent sweeps (other processes,
  other runs) lose no entry: the last writer's file holds every writer's scores. Where
  there is no ``flock`` the merge still happens, and a race can only cost a recomputation;
* every record carries its key and a checksum; a line that does not parse, belongs to
  another key or fails its checksum is ignored, and a shard that cannot be read at all
  counts as empty: damage costs recomputation, never a crash or a wrong number;
* writes are batched (every ``flush_every`` scores, or a quarter of the shard's size if
  more, or ``flush_seconds``, and on :meth:`ScoreCache.flush`), so a sweep does not
  rewrite a shard per score; a killed sweep loses at most the scores since its last
  flush. A flush writes the records' lines as made once at ``put`` and re-reads the shard
  only if another writer replaced it since, so a whole-space sweep is not quadratic;
* a cache that cannot be written (read-only, disk full, a directory where a shard belongs)
  logs one warning (the ``nasforge.scoring.cache`` logger) and the sweep goes on; an empty
  directory in a shard's place is removed and the shard written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

try:  # POSIX; elsewhere shards are merged without a lock (module docstring)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import own_state
from nasforge.tools.scoring.outcome import MetricScore

logger = logging.getLogger("nasforge.scoring.cache")


def default_cache_dir() -> Path:
    """The user's shared score cache (``$XDG_CACHE_HOME/nasforge/scores``, else
    ``~/.cache/nasforge/scores``): where ``nasforge score``/``correlate`` and every pool a
    strategy ranks read and write by default, so a sweep is paid for once."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nasforge" / "scores"


def space_config(space: object) -> str:
    """A space's own options as canonical JSON, "" for a space that has none.

    A genotype names its space and version, not the options a space object was made with
    (mlp-res's LeakyReLU slope, act-mlp's candidates), which change its networks and so
    their scores: a key that leaves them out serves one configuration's scores to another.
    A space without options keys as before, so existing caches stay valid.
    """
    state = own_state(space)  # not how its options were spelt, nor what it cached when used
    return json.dumps(state, sort_keys=True, default=repr) if state else ""


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


def _read_shard(path: Path, key: ScoreKey) -> dict[str, tuple[MetricScore, str]]:
    """The intact records of a shard with their lines; a missing or unreadable shard is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    wanted = key.to_json()
    table: dict[str, tuple[MetricScore, str]] = {}
    for line in text.splitlines():
        parsed = _parse(line, wanted)
        if parsed is not None:
            table[parsed[0]] = (parsed[1], line)
    return table


#: What identifies one version of a shard file: (inode, size, mtime). A rename makes a new
#: inode, so a file another writer replaced never passes for the one this cache wrote.
Stamp = tuple[int, int, int]


def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _clear_empty_directory(path: Path) -> None:
    """An empty directory where a shard belongs (made by hand, or by a tool gone wrong)
    is removed so the shard can be written; one that holds anything is left, and the write
    fails into the one warning of :meth:`ScoreCache.flush`."""
    if path.is_dir() and not path.is_symlink():
        with contextlib.suppress(OSError):
            path.rmdir()


def _why(exc: OSError) -> str:
    """What the filesystem said, and of which file (a staged temporary named as its target)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [os.fsdecode(f) for f in (exc.filename, exc.filename2) if f is not None]
    target = names[-1] if names else None
    return f"{reason}: {target}" if target else reason


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the read-merge-rename of
    one shard; the lock file is never the data, so renaming the shard does not break it."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class ScoreCache:
    """Scores on disk under ``directory``; only successful or NaN/inf scores are kept.

    Exceptions are not cached: they may be transient (out of memory) and should be
    retried on the next run. Call :meth:`flush` (or use the cache as a context manager)
    when done; :func:`~nasforge.tools.scoring.score_genotypes` does.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, flush_every: int = 64, flush_seconds: float = 5.0
    ) -> None:
        self.directory = Path(directory)
        self.flush_every = flush_every
        self.flush_seconds = flush_seconds
        self._shards: dict[str, dict[str, MetricScore]] = {}
        #: Each record's line, made once: a flush writes lines, it does not re-encode
        #: (re-encoding every record at every flush made a 15,625-cell sweep quadratic).
        self._lines: dict[str, dict[str, str]] = {}
        #: The shard file as this cache last read or wrote it; unchanged, it is not re-read.
        self._seen: dict[str, Stamp | None] = {}
        self._keys: dict[str, ScoreKey] = {}
        self._dirty: set[str] = set()
        self._pending = 0
        self._last_flush = time.monotonic()
        self._warned = False

    def _load(self, key: ScoreKey) -> dict[str, MetricScore]:
        name = key.shard()
        if name not in self._shards:
            path = self.directory / name
            stamp = _stamp(path)
            table = _read_shard(path, key)
            self._shards[name] = {gk: score for gk, (score, _) in table.items()}
            self._lines[name] = {gk: line for gk, (_, line) in table.items()}
            self._seen[name] = stamp
            self._keys[name] = key
        return self._shards[name]

    def get(self, key: ScoreKey, g: Genotype) -> MetricScore | None:
        hit = self._load(key).get(_genotype_key(g))
        return None if hit is None else attrs.evolve(hit, cached=True)

    def put(self, key: ScoreKey, g: Genotype, score: MetricScore) -> None:
        if score.error is not None:
            return
        gk = _genotype_key(g)
        score = attrs.evolve(score, cached=False)
        self._load(key)[gk] = score
        name = key.shard()
        self._lines[name][gk] = _record(gk, key, score)
        self._dirty.add(name)
        self._pending += 1
        # a flush rewrites the whole shard: in a big shard, wait for proportionally more
        # new scores (a quarter of it), so a 15,625-cell sweep writes it tens of times, not 250
        every = max(self.flush_every, len(self._lines[name]) // 4)
        if self._pending >= every or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write every shard with new scores, merged with what other writers put there."""
        try:
            for name in sorted(self._dirty):
                key = self._keys[name]
                path = self.directory / name
                self.directory.mkdir(parents=True, exist_ok=True)
                with _locked(self.directory / f".{name}.lock"):
                    stamp = _stamp(path)
                    if stamp is not None and stamp != self._seen.get(name):  # another writer's scores
                        for gk, (score, line) in _read_shard(path, key).items():
                            if gk not in self._lines[name]:  # ours win, as in a plain merge
                                self._shards[name][gk] = score
                                self._lines[name][gk] = line
                    text = "".join(line + "\n" for line in self._lines[name].values())
                    _clear_empty_directory(path)
                    atomic_write_text(path, text)
                    self._seen[name] = _stamp(path)
                self._dirty.discard(name)
        except OSError as exc:  # a cache is an optimisation: the sweep's scores stand
            if not self._warned:  # one record, not a Python warning quoting our source line
                logger.warning(
                    "score cache %s not written (%s); scores are not cached", self.directory, _why(exc)
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

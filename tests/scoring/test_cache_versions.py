"""The score cache only serves numbers the running code computes: keys carry the metric's
version, nasforge's version and the loss; damaged shards cost recomputation, never a crash
or a wrong number; several writers on one cache leave it intact."""

from __future__ import annotations

import json
import threading
import warnings
from typing import ClassVar

import pytest
import torch

import nasforge
from nasforge import Metric, MetricContext, MetricInfo, get_registry
from nasforge.tools.scoring import ScoreCache, ScoreKey, sample_genotypes, score_genotypes
from nasforge.tools.scoring.outcome import MetricScore
from nasforge_hnas import PoolScorer, PoolSettings

TINY = {"C": 4, "N": 1, "num_classes": 10}
DATA = (torch.randn(8, 3, 8, 8, generator=torch.Generator().manual_seed(0)), torch.arange(8) % 10)


def space():
    return get_registry().space("nb201")


class Size(Metric):
    """Parameter count plus ``offset``: the "code" of this metric, changed by the tests."""

    info: ClassVar[MetricInfo] = MetricInfo(name="size", needs_data=False, needs_labels=False, version="1")
    offset: ClassVar[float] = 0.0
    calls: ClassVar[int] = 0

    def score(self, model: torch.nn.Module, batch: object, *, ctx: MetricContext) -> float:
        Size.calls += 1  # counted on the base, for both "versions"
        return float(sum(p.numel() for p in model.parameters())) + self.offset


class SizeFixed(Size):
    """The same metric after a change to its numbers, with its version bumped."""

    info: ClassVar[MetricInfo] = MetricInfo(name="size", needs_data=False, needs_labels=False, version="2")
    offset: ClassVar[float] = 0.5


def _expected(g, offset: float = 0.0) -> float:  # noqa: ANN001 - a Genotype
    return float(sum(p.numel() for p in space().build(g, **TINY).parameters())) + offset


def test_metric_info_version_defaults_and_validates() -> None:
    assert MetricInfo(name="m").version == "1"
    with pytest.raises(ValueError):
        MetricInfo(name="m", version="")


@pytest.mark.slow
def test_a_bumped_metric_version_is_recomputed_not_served_stale(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 2, seed=1)
    old = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    assert list(old.values("size")) == [_expected(g) for g in gs]
    Size.calls = 0
    new = score_genotypes(sp, gs, [SizeFixed()], data=DATA, build=TINY, cache=tmp_path)
    assert not any(s.cached for s in new.column("size"))
    assert list(new.values("size")) == [_expected(g, 0.5) for g in gs]
    assert Size.calls == 2
    again = score_genotypes(sp, gs, [SizeFixed()], data=DATA, build=TINY, cache=tmp_path)
    assert all(s.cached for s in again.column("size")) and Size.calls == 2
    back = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)  # old entries kept
    assert all(s.cached for s in back.column("size"))
    assert list(back.values("size")) == [_expected(g) for g in gs]


@pytest.mark.slow
def test_a_new_nasforge_version_or_another_loss_is_a_miss(tmp_path, monkeypatch) -> None:
    sp = space()
    gs = sample_genotypes(sp, 1, seed=2)
    score_genotypes(sp, gs, [Size(), "snip"], data=DATA, build=TINY, cache=tmp_path)
    other_loss = score_genotypes(sp, gs, ["snip"], data=DATA, build=TINY, cache=tmp_path, loss="mse")
    assert not other_loss.column("snip")[0].cached
    monkeypatch.setattr(nasforge, "__version__", nasforge.__version__ + ".post1")
    upgraded = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    assert not upgraded.column("size")[0].cached


def _shard(tmp_path):  # noqa: ANN001, ANN202
    (path,) = tmp_path.glob("size-*.jsonl")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: text.index("\n") // 2],  # truncated inside the first record
        lambda text: "\x00\xff garbage \n" + text[:10],  # not JSON
        lambda text: text.replace('"value": ', '"value": 1', 1),  # tampered number: checksum fails
        lambda text: text.replace('"seed": 0', '"seed": 5', 1),  # a record of another key
    ],
)
def test_damaged_shards_are_recomputed_not_trusted(tmp_path, damage) -> None:  # noqa: ANN001
    sp = space()
    gs = sample_genotypes(sp, 2, seed=3)
    score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    shard = _shard(tmp_path)
    shard.write_text(damage(shard.read_text()))
    table = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    assert not table.column("size")[0].cached  # the first record was damaged in every case
    assert list(table.values("size")) == [_expected(g) for g in gs]
    lines = shard.read_text().splitlines()  # rewritten whole: every line intact again
    assert len(lines) == 2 and all(json.loads(line)["check"] for line in lines)


def test_binary_shard_is_an_empty_shard(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 1, seed=4)
    score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    _shard(tmp_path).write_bytes(b"\xff\xfe\x00" * 100)
    table = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    assert not table.column("size")[0].cached and table.values("size")[0] == _expected(gs[0])


@pytest.mark.slow
def test_concurrent_writers_leave_an_intact_cache(tmp_path) -> None:
    """Two caches on one directory flushing after every score: no torn or foreign record,
    and every score served afterwards is the one that was put."""
    key = ScoreKey("size", 0, "data", version="1")
    gs = sample_genotypes(space(), 40, seed=5)
    errors: list[BaseException] = []

    def writer(part: int) -> None:
        try:
            cache = ScoreCache(tmp_path, flush_every=1)
            for i, g in enumerate(gs):
                if i % 2 == part:
                    cache.put(key, g, MetricScore("size", float(i)))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not list(tmp_path.glob(".*.part"))  # no temporary file left behind
    lines = (tmp_path / key.shard()).read_text().splitlines()
    assert lines and all(json.loads(line)["key"] == key.to_json() for line in lines)
    fresh = ScoreCache(tmp_path)
    served = {i: fresh.get(key, g) for i, g in enumerate(gs)}
    hits = {i: s.value for i, s in served.items() if s is not None}
    assert len(hits) == len(lines) and all(v == float(i) for i, v in hits.items())


def test_an_unwritable_cache_warns_and_the_sweep_goes_on(tmp_path, caplog) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    sp = space()
    gs = sample_genotypes(sp, 1, seed=6)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level("WARNING", "nasforge"):
        warnings.simplefilter("always")
        table = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=blocked)
    assert table.values("size")[0] == _expected(gs[0])
    assert [r.getMessage() for r in caplog.records if "not written" in r.getMessage()], caplog.text
    assert not caught, "a logged warning, not a Python warning with a source line"


def _shard_dir(cache_dir, sp, g) -> object:
    """The path the shard of ``Size`` on ``g`` is written to (found by writing it once)."""
    score_genotypes(sp, [g], [Size()], data=DATA, build=TINY, cache=cache_dir)
    (shard,) = list(cache_dir.glob("*.jsonl"))
    shard.unlink()
    return shard


@pytest.mark.slow
def test_a_shard_that_became_a_directory_is_recovered_with_one_logged_warning(tmp_path, caplog) -> None:
    sp = space()
    gs = sample_genotypes(sp, 3, seed=6)
    shard = _shard_dir(tmp_path, sp, gs[0])
    shard.mkdir()
    (shard / "something").write_text("kept")  # not ours to remove: the shard is not written
    with warnings.catch_warnings(record=True) as caught, caplog.at_level("WARNING", "nasforge"):
        warnings.simplefilter("always")
        cache = ScoreCache(tmp_path, flush_every=1)
        table = score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=cache)
    assert list(table.values("size")) == [_expected(g) for g in gs]
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "not cached" in warned[0].getMessage(), caplog.text
    assert str(shard) in warned[0].getMessage()
    assert not caught, "no Python RuntimeWarning"
    assert (shard / "something").read_text() == "kept"


def test_an_empty_directory_in_a_shards_place_is_replaced_by_the_shard(tmp_path, caplog) -> None:
    sp = space()
    gs = sample_genotypes(sp, 2, seed=6)
    shard = _shard_dir(tmp_path, sp, gs[0])
    shard.mkdir()
    with caplog.at_level("WARNING", "nasforge"):
        score_genotypes(sp, gs, [Size()], data=DATA, build=TINY, cache=tmp_path)
    assert shard.is_file() and len(shard.read_text().splitlines()) == 2
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_hnas_pool_key_carries_the_versions(monkeypatch) -> None:
    sp = space()
    settings = PoolSettings(batch_size=8, input_shape=(3, 8, 8), build={"C": 4, "N": 1})
    key = PoolScorer(sp, settings).key
    assert PoolScorer(sp, settings).key == key
    monkeypatch.setattr(nasforge, "__version__", nasforge.__version__ + ".post1")
    assert PoolScorer(sp, settings).key != key

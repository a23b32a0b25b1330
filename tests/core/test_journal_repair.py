"""Issue 8, defect 1: a torn last line (a kill, a full disk) is repaired before anything is
appended after it, and a failed write never leaves a partial line behind."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from nasforge import Budget, Genotype, JournalError, Result, Trial, api
from nasforge.kernel.files import JsonLinesAppender
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, JournalWriter, journal_path
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.cli import main

TRIALS = 60
SEARCH = [
    "search",
    "--space",
    "toy",
    "--evaluator",
    "toy",
    "--strategy",
    "rea",
    "--budget-trials",
    str(TRIALS),
    "--seed",
    "1",
    "-o",
    "population_size=6",
    "-o",
    "sample_size=3",
    "-q",
]


def _trial(i: int) -> Trial:
    return Trial(i, Genotype("toy", "1", ("skip",) * 4), Result(objectives={"score": float(i)}))


def _every_line_parses(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().splitlines()]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run, made through the CLI (the reference every repair must match)."""
    run = tmp_path_factory.mktemp("finished")
    with pytest.raises(SystemExit) as done:
        main([*SEARCH, "--run-dir", str(run)])
    assert done.value.code in (0, None)
    return run


@pytest.mark.slow
def test_torn_line_then_two_resumes_leaves_a_readable_identical_run(finished, tmp_path, cli) -> None:
    """The issue's repro: keep N whole lines plus the first 200 bytes of the next, resume twice."""
    lines = journal_path(finished).read_bytes().splitlines(keepends=True)
    kept, torn = lines[:41], lines[41][:200]  # header + 40 trials, then a torn trial line
    assert len(lines[41]) > 200
    run = tmp_path / "run"
    run.mkdir()
    journal_path(run).write_bytes(b"".join(kept) + torn)

    for _ in range(2):
        cli("resume", run, "-q", "--json", ok=True)

    records = _every_line_parses(journal_path(run))
    assert [r["type"] for r in records] == ["header"] + ["trial"] * TRIALS + ["end"]
    repaired, reference = JournalReader.of_run(run), JournalReader.of_run(finished)
    assert [t.index for t in repaired.trials] == list(range(TRIALS)), "no trial lost or repeated"
    assert [(t.genotype, t.result) for t in repaired.trials] == [
        (t.genotype, t.result) for t in reference.trials
    ]
    assert repaired.end["best"] == reference.end["best"]
    saved = sorted(run.glob("journal.jsonl.torn-*"))
    assert len(saved) == 1 and saved[0].read_bytes() == torn, "the fragment is kept for forensics"


def test_a_whole_last_record_missing_only_its_newline_is_kept(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as w:
        w.header({})
        w.trial(_trial(0))
        w.trial(_trial(1))
    path.write_bytes(path.read_bytes()[:-1])  # killed between the record and its newline
    assert len(JournalReader(path).trials) == 2
    with JournalWriter(path) as w:
        w.trial(_trial(2))
    assert [t.index for t in JournalReader(path).trials] == [0, 1, 2]
    assert len(_every_line_parses(path)) == 4
    assert not list(tmp_path.glob("*.torn-*")), "nothing was cut"


class _DiskFills:
    """``os.write`` that lets ``whole`` writes through, then ``room`` more bytes, then ENOSPC."""

    def __init__(self, room: int, whole: int = 0) -> None:
        self.room, self.whole = room, whole
        self.real = os.write

    def __call__(self, fd: int, data: bytes) -> int:
        if self.whole > 0:
            self.whole -= 1
            return self.real(fd, data)
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self.real(fd, bytes(data[: self.room]))
        self.room -= n
        return n


def test_a_write_that_fills_the_disk_leaves_no_partial_line(tmp_path, monkeypatch) -> None:
    path = tmp_path / "journal.jsonl"
    w = JournalWriter(path)
    w.header({})
    w.trial(_trial(0))
    before = path.read_bytes()
    monkeypatch.setattr("nasforge.kernel.files.os.write", _DiskFills(room=100))  # half a record fits
    with pytest.raises(JournalError, match="No space left on device"):
        w.trial(_trial(1))
    assert path.read_bytes() == before, "the partial record was taken back"
    monkeypatch.undo()
    w.trial(_trial(1))
    w.close()
    assert [t.index for t in JournalReader(path).trials] == [0, 1]
    assert len(_every_line_parses(path)) == 3


def test_a_failed_fsync_takes_the_record_back(tmp_path, monkeypatch) -> None:
    path = tmp_path / "journal.jsonl"
    w = JournalWriter(path)
    w.header({})
    before = path.read_bytes()

    def fail(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr("nasforge.kernel.files.os.fsync", fail)
    with pytest.raises(JournalError, match="Input/output error"):
        w.trial(_trial(0))
    assert path.read_bytes() == before
    w.close()


@pytest.mark.slow
def test_disk_full_mid_search_is_one_line_and_resume_matches(finished, tmp_path, cli, monkeypatch) -> None:
    run = tmp_path / "run"
    # header + 24 trials fit, then 50 bytes of the next record, then the disk is full
    monkeypatch.setattr("nasforge.kernel.files.os.write", _DiskFills(room=50, whole=25))
    cli(*SEARCH, "--run-dir", run).assert_one_line_error("No space left on device")
    monkeypatch.undo()
    assert len(JournalReader.of_run(run).trials) == 24
    _every_line_parses(journal_path(run))

    cli("resume", run, "-q", ok=True)
    resumed, reference = JournalReader.of_run(run), JournalReader.of_run(finished)
    assert [(t.index, t.genotype, t.result) for t in resumed.trials] == [
        (t.index, t.genotype, t.result) for t in reference.trials
    ]


def test_appender_cuts_a_torn_tail_and_saves_it(tmp_path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": 3, "d"')
    with JsonLinesAppender(path, durable=False) as out:
        assert out.saved_fragments and out.saved_fragments[0].read_bytes() == b'{"c": 3, "d"'
        out.append({"e": 4})
    assert _every_line_parses(path) == [{"a": 1}, {"b": 2}, {"e": 4}]


def test_pool_cache_cuts_a_torn_line_before_appending(tmp_path) -> None:
    from nasforge_hnas import PoolCache
    from nasforge_hnas.pool_metrics import PoolMetrics

    path = tmp_path / "pool.jsonl"
    cache = PoolCache(path)
    cache.put("k", "a", PoolMetrics(1.0, 2.0, 0.5))
    with open(path, "ab") as fh:
        fh.write(b'{"genotype": "b", "key": "k", "ka')  # a run killed mid-append
    again = PoolCache(path)
    assert len(again) == 1
    again.put("k", "c", PoolMetrics(3.0, 4.0, 0.5))
    assert [r["genotype"] for r in _every_line_parses(path)] == ["a", "c"]
    third = PoolCache(path)
    assert third.get("k", "c") == PoolMetrics(3.0, 4.0, 0.5) and len(third) == 2
    assert len(list(tmp_path.glob("pool.jsonl.torn-*"))) == 1


def test_pool_cache_that_cannot_be_written_warns_and_keeps_scores(tmp_path) -> None:
    from nasforge_hnas import PoolCache
    from nasforge_hnas.pool_metrics import PoolMetrics

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = PoolCache(blocker / "pool.jsonl")
    with pytest.warns(RuntimeWarning, match="not updated"):
        cache.put("k", "a", PoolMetrics(1.0, 2.0, 0.5))
    assert cache.get("k", "a") == PoolMetrics(1.0, 2.0, 0.5)


@pytest.mark.slow
def test_api_resume_repairs_a_torn_line(tmp_path) -> None:
    """A repaired journal resumes through the Python API too (no CLI in between)."""
    spec = ExperimentSpec(
        space="toy",
        strategy="rea",
        evaluator="toy",
        budget=Budget(trials=20),
        seed=2,
        strategy_options={"population_size": 6, "sample_size": 3},
    )
    full = Experiment.from_spec(spec, run_dir=tmp_path / "full", progress=False).run()
    lines = journal_path(tmp_path / "full").read_bytes().splitlines(keepends=True)
    (tmp_path / "cut").mkdir()
    journal_path(tmp_path / "cut").write_bytes(b"".join(lines[:8]) + lines[8][:30])
    resumed = api.resume(tmp_path / "cut")
    assert [t.genotype for t in resumed.history] == [t.genotype for t in full.history]
    assert len(_every_line_parses(journal_path(tmp_path / "cut"))) == 22

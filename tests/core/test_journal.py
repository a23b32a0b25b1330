from __future__ import annotations

import json

import pytest

from nasforge import Genotype, JournalError, Result, Trial
from nasforge.run.journal_file import JournalReader, JournalWriter


def _trial(i: int) -> Trial:
    return Trial(i, Genotype("toy", "1", ("skip",) * 4), Result(objectives={"score": float(i)}))


def test_write_read(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as w:
        w.header({"spec": {}})
        for i in range(3):
            w.trial(_trial(i))
        w.end({"trials": 3})
    r = JournalReader(path)
    assert [t.index for t in r.trials] == [0, 1, 2]
    assert r.trials[2] == _trial(2)
    assert r.end == {"type": "end", "trials": 3}


def test_torn_last_line_is_dropped(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as w:
        w.header({})
        w.trial(_trial(0))
    line = json.dumps({"type": "trial", **_trial(1).to_json()})
    with open(path, "a") as fh:
        fh.write(line[: len(line) // 2])  # killed mid-write
    assert len(JournalReader(path).trials) == 1


def test_corruption_in_the_middle_is_an_error(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as w:
        w.header({})
    with open(path, "a") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"type": "trial", **_trial(0).to_json()}) + "\n")
    with pytest.raises(JournalError, match="corrupt journal line"):
        JournalReader(path)


def test_foreign_files_are_refused(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(JournalError):
        JournalReader(path)
    path.write_text('{"type": "trial"}\n')
    with pytest.raises(JournalError, match="header"):
        JournalReader(path)
    with pytest.raises(JournalError, match="no journal"):
        JournalReader(tmp_path / "missing.jsonl")

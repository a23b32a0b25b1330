"""Issue 8, defect 11 (journal part): an empty journal is no run, a finished run is only
read, a stale end record is not the run's end, and trial records carry a checksum."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from nasforge import Budget, JournalError, api
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import CHECKSUM_DECLARATION, CHECKSUM_KEY, JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec

TRIALS = 25
_TINY_DARTS = {"supernet": {"C": 4, "N": 1}, "epochs": 1, "max_batches": 2, "batch_size": 16}


def _spec(**kw) -> ExperimentSpec:
    base = dict(
        space="toy",
        strategy="rea",
        evaluator="toy",
        budget=Budget(trials=TRIALS),
        seed=3,
        strategy_options={"population_size": 6, "sample_size": 3},
    )
    base.update(kw)
    return ExperimentSpec(**base)


def _run(run_dir: Path):
    return Experiment.from_spec(_spec(), run_dir=run_dir, progress=False).run()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("finished")
    _run(run)
    return run


def _lines(run: Path) -> list[str]:
    return journal_path(run).read_text().splitlines(keepends=True)


def _write(run: Path, lines: list[str]) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    journal_path(run).write_text("".join(lines))
    return run


def _same_trials(a: Path, b: Path) -> None:
    ta, tb = JournalReader.of_run(a).trials, JournalReader.of_run(b).trials
    assert [(t.index, t.genotype, t.result) for t in ta] == [(t.index, t.genotype, t.result) for t in tb]


# --- an empty journal is no run -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("content", ["", "\n", '{"created": "2024-01-01T00:00:00", "environm'])
def test_empty_or_torn_header_journal_does_not_block_a_rerun(finished, tmp_path, cli, content) -> None:
    run = _write(tmp_path / "run", [content])
    refused = cli("resume", run, "-q")
    refused.assert_one_line_error("is empty")
    assert "--run-dir" in refused.err
    _run(run)  # the same search again, into the same directory
    _same_trials(run, finished)
    assert JournalReader.of_run(run).end is not None


@pytest.mark.slow
def test_empty_journal_does_not_block_a_one_shot_rerun(tmp_path) -> None:
    torch.set_num_threads(1)
    run = _write(tmp_path / "run", [""])
    api.search("nb201", "darts", run_dir=run, dataset="digits", strategy_options=_TINY_DARTS)
    reader = JournalReader.of_run(run)
    assert reader.header["mode"] == "one-shot" and reader.end is not None
    assert not list(run.glob("journal.interrupted-*")), "an empty journal is not an interrupted run"


# --- a finished run is only read ----------------------------------------------------------
class _NoWriting:
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("opened for writing")


@pytest.mark.slow
def test_resume_of_a_finished_run_opens_nothing_for_writing(finished, tmp_path, monkeypatch) -> None:
    torch.set_num_threads(1)
    one_shot = tmp_path / "one-shot"
    api.search("nb201", "darts", run_dir=one_shot, dataset="digits", strategy_options=_TINY_DARTS)
    before = {p: journal_path(p).read_bytes() for p in (finished, one_shot)}
    for module in ("nasforge.run.run_directory", "nasforge.run.one_shot_run"):
        monkeypatch.setattr(f"{module}.JournalWriter", _NoWriting)
        monkeypatch.setattr(f"{module}.RunLock", _NoWriting)
    outcome = api.resume(finished)
    assert len(outcome.history) == TRIALS
    assert api.resume(one_shot).best is not None
    assert {p: journal_path(p).read_bytes() for p in before} == before


@contextlib.contextmanager
def _read_only(run: Path) -> Iterator[None]:
    """Make ``run`` read-only for real: a read-only bind mount as root (root writes through
    file modes), file modes otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(run), str(run)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(run)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(run)], check=True)
        return
    for path in [*run.iterdir(), run]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        run.chmod(0o755)


def test_resume_of_a_finished_run_on_read_only_files(finished, tmp_path) -> None:
    import shutil

    run = tmp_path / "ro"
    shutil.copytree(finished, run)
    with _read_only(run):
        with pytest.raises(OSError):
            (run / "probe").write_text("x")  # the medium really is read-only
        assert len(api.resume(run).history) == TRIALS


# --- a stale end record ----------------------------------------------------------------------
def test_an_end_record_followed_by_trials_is_not_the_end(finished, tmp_path) -> None:
    lines = _lines(finished)
    header, trials, end = lines[0], lines[1:-1], lines[-1]
    stale = json.dumps({**json.loads(end), "trials": 10}) + "\n"
    run = _write(tmp_path / "run", [header, *trials[:10], stale, *trials[10:15]])
    reader = JournalReader.of_run(run)
    assert len(reader.trials) == 15 and reader.end is None
    outcome = api.resume(run)
    assert len(outcome.history) == TRIALS
    reader = JournalReader.of_run(run)
    assert reader.end is not None and reader.end["trials"] == TRIALS, "the last end wins"
    _same_trials(run, finished)
    kinds = [json.loads(line)["type"] for line in _lines(run)]
    assert kinds.count("end") == 1 and kinds[-1] == "end", "the stale end record is gone: one end"
    assert _lines(run)[: 1 + 10] == [header, *trials[:10]], "every other line kept as it was"


def test_a_journal_without_a_stale_end_is_not_rewritten(finished, tmp_path) -> None:
    lines = _lines(finished)
    run = _write(tmp_path / "run", lines[:-1])  # killed before its end: trials only
    before = os.stat(journal_path(run)).st_ino
    api.resume(run)
    assert os.stat(journal_path(run)).st_ino == before, "appended to, not replaced"
    assert [json.loads(line)["type"] for line in _lines(run)].count("end") == 1


# --- checksums -------------------------------------------------------------------------------
def test_a_tampered_accuracy_is_refused_naming_the_line(finished, tmp_path, cli) -> None:
    lines = _lines(finished)
    record = json.loads(lines[5])
    record["result"]["objectives"]["score"] += 100.0  # made to look like the best
    lines[5] = json.dumps(record, sort_keys=True) + "\n"
    run = _write(tmp_path / "run", lines)
    with pytest.raises(JournalError, match=r"journal\.jsonl:6: trial 4 fails its checksum"):
        JournalReader.of_run(run)
    refused = cli("resume", run, "-q")
    refused.assert_one_line_error("journal.jsonl:6")
    assert "checksum" in refused.err
    with pytest.raises(JournalError, match="checksum"):
        _run(run)


def test_a_removed_checksum_is_refused(finished, tmp_path) -> None:
    lines = _lines(finished)
    record = json.loads(lines[3])
    del record[CHECKSUM_KEY]
    lines[3] = json.dumps(record, sort_keys=True) + "\n"
    with pytest.raises(JournalError, match=r"journal\.jsonl:4: trial record has no checksum"):
        JournalReader.of_run(_write(tmp_path / "run", lines))


def test_journals_from_before_checksums_still_read_and_resume(finished, tmp_path) -> None:
    old = []
    for line in _lines(finished)[:11]:  # header + 10 trials, as an older nasforge wrote them
        record = json.loads(line)
        record.pop(CHECKSUM_KEY, None)
        record.pop(CHECKSUM_DECLARATION, None)
        old.append(json.dumps(record, sort_keys=True) + "\n")
    run = _write(tmp_path / "run", old)
    assert len(JournalReader.of_run(run).trials) == 10
    api.resume(run)
    _same_trials(run, finished)
    records = [json.loads(line) for line in _lines(run)]
    assert [CHECKSUM_KEY in r for r in records[1:-1]] == [False] * 10 + [True] * 15

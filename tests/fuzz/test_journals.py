"""Run journals: torn, reordered, foreign, tampered, empty; read by the library and given
to ``resume``, ``inspect``, ``export`` and a re-run of the same search."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.cases import Case, filesystem_scenarios, journal_case, py_journal_case
from fuzz.harness import run_cli
from fuzz.properties import assert_case_ok, fuzz_settings
from fuzz.source import HypothesisSource
from fuzz.templates import Templates


@pytest.mark.slow
@fuzz_settings(80)
@given(data=st.data())
def test_journal_loaders_read_or_refuse(templates: Templates, data: st.DataObject) -> None:
    """JournalReader, inspect_file and api.resume return, or raise a JournalError."""
    assert_case_ok(py_journal_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(40)
@given(data=st.data())
def test_cli_on_damaged_journals(templates: Templates, data: st.DataObject) -> None:
    """A resume that succeeds must leave a journal that a second resume reads unchanged."""
    assert_case_ok(journal_case(HypothesisSource(data), templates))


@pytest.mark.parametrize("run", ["toy-rea", "nb201-local"])
def test_torn_last_line_resumes_twice(templates: Templates, run: str) -> None:
    """Issue 8 item 1's recipe: whole lines, then 40 bytes of the next; resume; resume.

    Both resumes succeed, and the journal ends with every trial exactly once.
    """
    lines = templates.unfinished(run).splitlines()
    torn = "\n".join(lines[:-1]) + "\n" + lines[-1][:40]
    case = Case(
        "journal",
        ["resume", "run", "-q"],
        files={"run/journal.jsonl": torn.encode()},
        setup=f"run/journal.jsonl: unfinished {run}, last line cut to 40 bytes",
    )
    with tempfile.TemporaryDirectory() as d:
        cwd = Path(d)
        case.materialise(cwd)
        for attempt in (1, 2):
            outcome = run_cli(case.argv or [], cwd)
            assert outcome.code == 0, f"resume {attempt}: {outcome.err}{outcome.tb}"
        from nasforge.run.journal_file import JournalReader

        reader = JournalReader.of_run(cwd / "run")
        budget = reader.header["spec"]["budget"]["trials"]
        assert [t.index for t in reader.trials] == list(range(budget))
        assert reader.end is not None


@pytest.mark.slow
@pytest.mark.parametrize("index", range(12))
def test_filesystem_conflicts(templates: Templates, index: int) -> None:
    """Run dir is a file, journal is a directory, ``--out`` is a file, names too long, ..."""
    assert_case_ok(filesystem_scenarios(templates)[index])

"""The simplex search from the CLI: ``nasforge search --space act-mlp --strategy simplex``
prints the chosen architecture, exports it (safetensors + ONNX), journals every epoch and
resumes like every one-shot strategy; bad input is one line and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasforge.kernel.registry import get_registry
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.tools.export import load_genotype
from nasforge_simplex.act_mlp_space import ActMlpSpace

SEARCH = ("search", "--space", "act-mlp", "--strategy", "simplex", "--dataset", "digits")


def test_search_prints_exports_and_journals(cli, tmp_path: Path) -> None:
    run, out = tmp_path / "run", tmp_path / "export"
    result = cli(*SEARCH, "-o", "epochs=4", "--run-dir", run, "--export", out, "--json", "-q", ok=True)
    summary = result.json()
    direct = get_registry().get("strategy", "simplex")(seed=0, progress=False, epochs=4)
    digits = get_registry().get("dataset", "digits").load(seed=0)
    expected = direct.fit(ActMlpSpace(), digits).best
    assert summary["best"] == ActMlpSpace().format(expected), "the CLI ran the search the options describe"
    assert load_genotype(Path(summary["genotype_file"]), ActMlpSpace()) == expected
    assert Path(summary["onnx_file"]).stat().st_size > 0 and summary["onnx_max_abs_diff"] < 1e-4
    reader = JournalReader.of_run(run)
    assert reader.header["spec"]["strategy_options"] == {"epochs": 4}
    assert len(reader.trials) == 4 and reader.end is not None
    assert reader.end["best_text"] == summary["best"]
    last = reader.trials[-1].result.metadata  # the verdict is journaled with the last epoch
    assert last["diagnostic_summary"]["edges"] == 3 and len(last["diagnostic"]) == 3
    assert last["ranking"]["candidates"][0]["genotype"] == summary["best"]


def test_default_search_prints_the_architecture_and_the_diagnostic(cli, tmp_path: Path) -> None:
    """What a user sees: the per-candidate table, the verdicts, the ranking, the result."""
    result = cli(*SEARCH, "--run-dir", tmp_path / "run", ok=True)
    best = json.loads(Path(journal_path(tmp_path / "run")).read_text().splitlines()[-1])["best_text"]
    assert best in result.out  # the "search finished" table
    for text in (
        "arg max vs shared-weight best",
        "shared best",
        "architectures by alpha",
        "relu ~ leaky_relu",
    ):
        assert text in result.err.replace("\n", " ") or text in result.out


@pytest.mark.slow
def test_resume_reads_a_finished_run_and_restarts_an_interrupted_one(cli, tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = cli(*SEARCH, "-o", "epochs=3", "--run-dir", run, "--json", "-q", ok=True).json()
    again = cli("resume", run, "--json", "-q", ok=True).json()
    assert again["best"] == first["best"]
    path = journal_path(run)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-2]) + "\n")  # killed during the last epoch: no end record
    resumed = cli("resume", run, "--json", "-q", ok=True).json()
    assert resumed["best"] == first["best"], "the seed makes the restarted search end where it ended"
    assert len(JournalReader.of_run(run).trials) == 3
    assert list(run.glob("journal.interrupted-*.jsonl")), "the interrupted journal is kept"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("-o", "parameterisation=adam"), "parameterisation"),
        (("-o", "epochz=2"), "epochz"),
        (("-o", "mode=third_order"), "mode"),
        (("--space-option", "layers=0"), "layers"),
        (("--space-option", 'ops=["relu", "nope"]'), "nope"),
        (("--space-option", 'ops=["relu"]'), "at least two"),
    ],
)
def test_bad_input_is_one_line(cli, tmp_path: Path, argv: tuple[str, ...], needle: str) -> None:
    cli(*SEARCH, *argv, "--run-dir", tmp_path / "run", "-q").assert_one_line_error(needle)

"""DARTS from the one CLI: ``nasforge search`` takes every option of the former
``python -m nasforge_darts search`` (the mapping in plugins/nasforge_darts/README.md), and
``nasforge darts-compare`` is the DARTS plugin's own command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from nasforge.kernel.registry import get_registry, load_registry
from nasforge.run.journal_file import JournalReader
from nasforge.tools.cli import main
from nasforge.tools.cli.plugin_commands import mount_plugin_commands
from nasforge.tools.export import load_genotype
from nasforge_darts.space import DartsSpace

#: The former ``search --strategy darts --order 2 --epochs 1 --C 2 --cells 3 --arch-lr 3e-3
#: --batch-size 32`` as strategy options (``-o max_batches=2`` keeps it a smoke test).
OPTIONS = {
    "epochs": 1,
    "order": 2,
    "supernet": {"C": 2},
    "darts_layers": 3,
    "arch_lr": 0.003,
    "batch_size": 32,
    "max_batches": 2,
}


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_the_former_search_options_reach_nasforge_search(capsys, tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv: list[object] = ["search", "--space", "darts", "--strategy", "darts", "--dataset", "digits"]
    for key, value in OPTIONS.items():
        argv += ["-o", f"{key}={json.dumps(value)}"]
    argv += ["--run-dir", run, "--export", run, "--json", "-q"]  # --out DIR: run and export there
    argv += ["--build-option", "C=4", "--build-option", "layers=3", "--build-option", "auxiliary=false"]
    code, out, err = _cli(capsys, *argv)
    assert code == 0, err
    summary = json.loads(out)

    direct = get_registry().get("strategy", "darts")(seed=0, progress=False, **OPTIONS)
    digits = get_registry().get("dataset", "digits").load(seed=0)
    expected = direct.fit(DartsSpace(), digits).best
    assert summary["best"] == DartsSpace().format(expected), "the CLI ran the search the options describe"
    assert load_genotype(Path(summary["genotype_file"]), DartsSpace()) == expected
    assert Path(summary["onnx_file"]).stat().st_size > 0 and summary["onnx_max_abs_diff"] < 1e-4
    reader = JournalReader.of_run(run)
    assert reader.header["spec"]["strategy_options"] == OPTIONS, "a resume rebuilds the same search"
    assert len(reader.trials) == 1 and reader.end is not None


def test_darts_compare_comes_from_the_darts_plugin() -> None:
    registry = get_registry()
    assert registry.origin("command", "darts-compare") == "darts"
    without = load_registry(disabled=["darts"])  # as if the plugin were uninstalled
    app = typer.Typer()
    app.command("search")(lambda: None)
    assert "darts-compare" not in mount_plugin_commands(app, without)


def test_darts_compare_bad_seeds_are_one_line(capsys) -> None:
    code, _, err = _cli(capsys, "darts-compare", "--seeds", "0,x")
    assert code == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        "error: --seeds takes comma-separated integers, got '0,x'"
    ]


@pytest.mark.slow
def test_darts_compare_unknown_evaluator_fails_before_searching(capsys) -> None:
    code, _, err = _cli(capsys, "darts-compare", "--evaluator", "no-such-table", "--epochs", "1")
    assert code == 2 and "no-such-table" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_readme_digits_demo_finishes_in_minutes(capsys, tmp_path: Path) -> None:
    """README's demo: PR-DARTS on full digits, 10 epochs, C = 4, 3 cells (about 45 s here)."""
    run = tmp_path / "run"
    code, out, err = _cli(
        capsys,
        *("search", "--space", "darts", "--strategy", "prdarts", "--dataset", "digits", "-q", "--json"),
        *("-o", "epochs=10", "-o", 'supernet={"C": 4}', "-o", "darts_layers=3", "-o", "arch_lr=3e-3"),
        *("-o", "batch_size=64", "--run-dir", run, "--export", run),
        *("--build-option", "C=16", "--build-option", "layers=5", "--build-option", "auxiliary=false"),
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["search_seconds"] < 300 and summary["onnx_max_abs_diff"] < 1e-4
    train_acc = [t.result.metadata["metrics"]["train_accuracy"] for t in JournalReader.of_run(run).trials]
    assert len(train_acc) == 10 and max(train_acc) > 0.3  # the supernet learns (chance: 0.1)

"""The example family from the command line, by its file alone: every kind of strategy
finishes with a winner, a run trains and exports, resume refuses an edited file, and a bad
path or declaration is one line."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import CliRun

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cnn_family.py"
SPACE = f"{EXAMPLE}:CnnFamily"
#: The family at its smallest that still varies every kind of choice it makes.
TINY = ["depths=[1,2]", "kernels=[3,5]", "widths=[4,8]", 'acts=["relu","gelu"]']
TRAIN = ["--evaluator", "short-train", "--train-data", "digits", "--evaluator-option", "epochs=1"]
ONE_SHOT = ["-o", "epochs=1", "-o", "max_batches=2", "-o", "batch_size=16"]
NESBS = {
    "supernet_epochs": 1,
    "posterior_epochs": 1,
    "max_batches": 2,
    "batch_size": 16,
    "svgd_steps": 4,
    "iterations": 1,
    "ensemble_size": 2,
}

RUNS: dict[str, list[str]] = {
    "random": ["--strategy", "random", *TRAIN, "--budget-trials", "2"],
    "rea": ["--strategy", "rea", *TRAIN, "--budget-trials", "3", "-o", "population_size=2",
            "-o", "sample_size=2"],
    "local": ["--strategy", "local", *TRAIN, "--budget-trials", "2"],
    "optuna-tpe": ["--strategy", "optuna-tpe", *TRAIN, "--budget-trials", "2"],
    "nsga2": [
        "--strategy", "nsga2", *TRAIN, "--budget-trials", "3", "-o", "population_size=2",
        "--evaluator-option", "latency=onnx", "--evaluator-option", "latency_repeats=3",
        "--evaluator-option", "latency_warmup=1", "--evaluator-option", "latency_cache=false",
        "--objective", "valid_accuracy:max", "--objective", "onnx_latency_ms:min",
    ],
    "prerank": [
        "--strategy", "prerank", *TRAIN, "--budget-trials", "2",
        "-o", "metric=synflow", "-o", "pool=4", "-o", "top_k=2", "-o", "cache=false",
    ],
    "hyperband": ["--strategy", "hyperband", *TRAIN, "--budget-trials", "3", "-o", "brackets=1"],
    "darts": ["--strategy", "darts", "--train-data", "digits", *ONE_SHOT],
    "prdarts": ["--strategy", "prdarts", "--train-data", "digits", *ONE_SHOT],
    "simplex": [
        "--strategy", "simplex", "--train-data", "digits", *ONE_SHOT,
        "-o", "rank_candidates=2", "-o", "diagnostic_samples=8",
    ],
    "nasi": ["--strategy", "nasi", "--train-data", "digits", "-o", "steps=2", "-o", "batch_size=8"],
    "nesbs": ["--strategy", "nesbs", "--train-data", "digits",
              *[a for k, v in NESBS.items() for a in ("-o", f"{k}={json.dumps(v)}")]],
}  # fmt: skip


def search(cli: Any, run_dir: Path, *args: str) -> CliRun:
    space_options = [a for option in TINY for a in ("--space-option", option)]
    return cli("search", "--space", SPACE, *space_options, "-q", "--json", "--run-dir", run_dir, *args)


@pytest.mark.parametrize("strategy", sorted(RUNS))
def test_every_kind_of_strategy_finds_a_winner_on_the_family(cli: Any, tmp_path: Path, strategy: str) -> None:
    run = search(cli, tmp_path / "run", *RUNS[strategy])
    assert run.code == 0, run.err
    summary = run.json()
    assert isinstance(summary, dict)
    assert "stage1.depth=" in str(summary["best"]), summary


def test_the_winner_trains_exports_and_onnxruntime_reproduces_its_accuracy(cli: Any, tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    search(cli, tmp_path / "run", *RUNS["random"])
    report = cli(
        "train", tmp_path / "run", "--epochs", "1", "--export", tmp_path / "out", "-q", "--json", ok=True
    )
    record = report.json()
    assert isinstance(record, dict)
    held = record["heldout"]["accuracy"]
    assert record["export"]["onnx_heldout_accuracy"] == pytest.approx(held)
    session = ort.InferenceSession(str(tmp_path / "out" / "model.onnx"), providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].shape[1:] == [1, 8, 8]
    info = cli("inspect", tmp_path / "out" / "genotype.safetensors", "--json", ok=True).json()
    assert isinstance(info, dict) and str(info["text"]).startswith("stage1.depth="), info


def copy_of_example(tmp_path: Path) -> Path:
    path = tmp_path / "family.py"
    shutil.copy(EXAMPLE, path)
    return path


def test_a_resumed_run_of_a_file_space_equals_an_uninterrupted_one(cli: Any, tmp_path: Path) -> None:
    args = [
        "--strategy",
        "rea",
        *TRAIN,
        "--budget-trials",
        "4",
        "-o",
        "population_size=2",
        "-o",
        "sample_size=2",
    ]
    search(cli, tmp_path / "whole", *args)
    whole = (tmp_path / "whole" / "journal.jsonl").read_text().splitlines()
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "journal.jsonl").write_text("\n".join(whole[:3]) + "\n")  # the header and two trials
    cli("resume", cut, "-q", ok=True)
    again = (cut / "journal.jsonl").read_text().splitlines()

    def trials(lines: list[str]) -> list[Any]:
        records = [json.loads(line) for line in lines]
        return [(r["genotype"], r["result"]["objectives"]) for r in records if r["type"] == "trial"]

    assert len(trials(again)) == 4 and trials(again) == trials(whole)


def test_resume_refuses_a_space_file_edited_since_and_leaves_the_run_as_it_was(
    cli: Any, tmp_path: Path
) -> None:
    family = copy_of_example(tmp_path)
    args = ["--strategy", "random", *TRAIN, "--budget-trials", "3"]
    space_options = [a for option in TINY for a in ("--space-option", option)]
    cli(
        "search",
        "--space",
        f"{family}:CnnFamily",
        *space_options,
        "-q",
        "--run-dir",
        tmp_path / "run",
        *args,
        ok=True,
    )
    journal = tmp_path / "run" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n")  # killed after its first trial
    before = sorted(p.name for p in (tmp_path / "run").iterdir()), journal.read_bytes()
    family.write_text(family.read_text().replace("(3, 5, 7)", "(3, 5)"))
    cli("resume", tmp_path / "run").assert_one_line_error(str(family), "changed since the run started")
    assert (sorted(p.name for p in (tmp_path / "run").iterdir()), journal.read_bytes()) == before


BAD_FILES = {
    "raises.py": "raise RuntimeError('not today')\n",
    "empty.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                return nn.Conv2d(in_channels, c.width("width", []), 3)
    """,
    "twice.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                return nn.Conv2d(c.width("w", [4, 8]), c.width("w", [4, 8]), 3)
    """,
    "notmodule.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                return nn.Sequential(nn.Flatten(), c.layer("op", {"relu": nn.ReLU, "half": 0.5}))
    """,
    "boolwidth.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                return nn.Sequential(nn.Flatten(), nn.Linear(64, c.width("width", [True, 8])))
    """,
    "floatwidth.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                return nn.Sequential(nn.Flatten(), nn.Linear(64, c.width("width", [8.0, 16])))
    """,
    "shapes.py": """
        from torch import nn
        from nasforge import DeclaredSpace
        class Net(DeclaredSpace):
            def declare(self, c, *, in_channels=3, num_classes=10):
                op = c.layer("op", {"narrow": lambda: nn.Linear(64, 8), "wide": lambda: nn.Linear(64, 16)})
                return nn.Sequential(nn.Flatten(), op, nn.LazyLinear(num_classes))
    """,
}


@pytest.mark.parametrize(
    ("space", "strategy", "needles"),
    [
        ("missing.py:Net", "random", ["no such file: missing.py"]),
        (f"{EXAMPLE}:Missing", "random", ["has no 'Missing'", "CnnFamily"]),
        ("raises.py:Net", "random", ["raises.py failed as it ran: RuntimeError: not today"]),
        ("empty.py:Net", "random", ["'width' has no candidates"]),
        ("twice.py:Net", "random", ["label 'w' is used twice"]),
        ("notmodule.py:Net", "random", ["layer choice 'op': candidate 'half' is 0.5, not a module"]),
        ("boolwidth.py:Net", "random", ["width choice 'width'", "got True"]),
        ("floatwidth.py:Net", "random", ["width choice 'width'", "got 8.0"]),
        ("shapes.py:Net", "darts", ["'op': candidates 'narrow' and 'wide'", "(N, 8) and (N, 16)"]),
    ],
)
def test_bad_paths_and_declarations_are_one_line_and_write_nothing(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, space: str, strategy: str, needles: list[str]
) -> None:
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.chdir(tmp_path)
    extra = TRAIN if strategy == "random" else ["--train-data", "digits", *ONE_SHOT]
    run = cli("search", "--space", space, "--strategy", strategy, "--run-dir", tmp_path / "run", *extra)
    run.assert_one_line_error(*needles)
    assert not (tmp_path / "run").exists()


def test_a_file_space_runs_on_a_process_pool(cli: Any, tmp_path: Path) -> None:
    """Workers unpickle the space's class from its file, found by the name it was loaded under."""
    args = ["--strategy", "random", *TRAIN, "--budget-trials", "2", "--executor", "process", "--workers", "2"]
    run = search(cli, tmp_path / "run", *args)
    assert run.code == 0, run.err
    assert "stage1.depth=" in str(run.json())


def test_a_genotype_file_names_the_file_its_space_was_declared_in(cli: Any, tmp_path: Path) -> None:
    family = Path(__file__).resolve().parent / "families.py"
    cli("search", "--space", f"{family}:OneStage", "--strategy", "random", *TRAIN, "--budget-trials", "1",
        "--run-dir", tmp_path / "run", "--export", tmp_path / "out", "-q", ok=True)  # fmt: skip
    again = cli(
        "export", tmp_path / "out" / "genotype.safetensors", "--out", tmp_path / "again", "--json", ok=True
    )
    assert "stage.depth=" in str(again.json())  # no --space: the file found the space

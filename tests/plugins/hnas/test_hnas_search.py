"""HNAS as a plain ``nasforge search --strategy hnas``: the run's network options reach the
pool's scoring, the evaluator and the export, so the deprecated ``nasforge hnas`` command
is the same search under another name."""

from __future__ import annotations

import json

import attrs
import pytest
import torch
import typer
from typer.testing import CliRunner

from nasforge.kernel.errors import OptionError
from nasforge.kernel.registry import get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.run.budget import Budget
from nasforge.run.construction import build_component
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.cli.search_cmd import search
from nasforge.tools.export import load_genotype
from nasforge_hnas.cli import hnas

app = typer.Typer()
app.command()(hnas)
app.command()(search)
SMALL = ["-o", "pool_size=10", "-o", "input_shape=[3,8,8]", "-o", "batch_size=16"]
BUILD = ["--build-option", "C=4", "--build-option", "N=1"]


def _invoke(args: list[str]) -> dict:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_search_strategy_hnas_is_the_hnas_command(tmp_path) -> None:
    torch.set_num_threads(1)
    table = ["--evaluator", "nb201-table", "--dataset", "cifar10"]
    old = _invoke(
        ["hnas", *table, "--steps", "3", *BUILD, *SMALL, "--no-onnx", "--json", "--quiet"]
        + ["--out", str(tmp_path / "e1"), "--run-dir", str(tmp_path / "r1")]
    )
    new = _invoke(
        ["search", "--space", "nb201", "--strategy", "hnas", *table, "--budget-trials", "3", "-o", "steps=3"]
        + [
            *BUILD,
            *SMALL,
            "--json",
            "--quiet",
            "--export",
            str(tmp_path / "e2"),
            "--run-dir",
            str(tmp_path / "r2"),
        ]
    )
    assert new["best_genotype"] == old["best_genotype"]
    assert new["value"] == old["valid_accuracy"] and new["reported_value"] == old["reported_value"]
    old_trials = [t.genotype for t in JournalReader(journal_path(tmp_path / "r1")).trials]
    assert [t.genotype for t in JournalReader(journal_path(tmp_path / "r2")).trials] == old_trials
    assert (
        list(load_genotype(tmp_path / "e2" / "genotype.safetensors").choices)
        == old["best_genotype"]["choices"]
    )


def test_the_hnas_command_says_it_is_deprecated(tmp_path) -> None:
    args = ["hnas", "--evaluator", "nb201-table", "--dataset", "cifar10", "--steps", "2", *BUILD, *SMALL]
    out = ["--no-onnx", "--quiet", "--out", str(tmp_path / "e"), "--run-dir", str(tmp_path / "r")]
    result = CliRunner().invoke(app, [*args, *out])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stderr.splitlines() if "deprecated" in x)
    assert "nasforge search --strategy hnas" in line and "--build-option C=4" in line
    assert "removed in nasforge 0.3" in line
    assert "-o data=" not in line  # a table's pool is scored on Gaussian data, as the command did
    assert "--executor" not in line  # in-process: nothing to say


@pytest.mark.slow
def test_the_deprecation_line_keeps_where_the_pool_is_scored(tmp_path) -> None:
    args = ["hnas", "--evaluator", "nb201-table", "--dataset", "cifar10", "--steps", "2", *BUILD, *SMALL]
    where = ["--executor", "process", "--workers", "2"]
    out = ["--no-onnx", "--quiet", "--out", str(tmp_path / "e"), "--run-dir", str(tmp_path / "r")]
    result = CliRunner().invoke(app, [*args, *where, *out])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stderr.splitlines() if "deprecated" in x)
    assert "--executor process --workers 2" in line


def _built(spec: ExperimentSpec) -> tuple:
    registry = get_registry()
    experiment = Experiment.from_spec(spec, run_dir=None, registry=registry)
    return experiment.strategy, experiment.evaluator


def test_build_options_reach_the_pool_and_the_evaluator() -> None:
    spec = ExperimentSpec(
        space="nb201",
        strategy="hnas",
        evaluator="short-train",
        budget=Budget(trials=2),
        train_data="digits",
        strategy_options={"pool_size": 4, "data": "digits", "build": {"N": 2}},
        evaluator_options={"epochs": 1},
        build_options={"C": 4, "N": 1},
    )
    strategy, evaluator = _built(spec)
    assert strategy.settings.pool.build == {"C": 4, "N": 2}  # the strategy's own option wins
    assert evaluator.build_options == {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}
    job = strategy.scorer.job()  # networks for the data they are scored on: digits' 1x8x8
    assert job.build == {"C": 4, "N": 2, "num_classes": 10, "in_channels": 1}
    assert tuple(job.x.shape[1:]) == (1, 8, 8)


def test_build_options_are_journaled_only_when_given() -> None:
    plain = ExperimentSpec(space="nb201", strategy="rea", evaluator="nb201-table", budget=None)
    assert "build_options" not in plain.to_json()  # as every spec before them was written
    given = attrs.evolve(plain, build_options={"C": 8})
    assert given.to_json()["build_options"] == {"C": 8}
    assert ExperimentSpec.from_json(given.to_json()) == given
    assert ExperimentSpec.from_json(plain.to_json()).build_options == {}


def test_build_options_are_not_a_user_option() -> None:
    class Takes:
        context_fields = frozenset({"build_options"})

        def __init__(self, *, build_options: dict | None = None) -> None:
            self.build_options = build_options

    context = RunContext(build_options={"C": 2})
    assert build_component("component", Takes, context, {}).build_options == {"C": 2}
    with pytest.raises(OptionError, match="supplied by the run"):
        build_component("component", Takes, RunContext(), {"build_options": {"C": 2}})

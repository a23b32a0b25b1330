"""The options of ``nasforge search`` and ``nasforge resume``, declared once as types.

Each is an ``Annotated`` type carrying its Typer option (flag, help, bounds), so a
command's signature reads as a list of what it takes, and two commands that share an
option show the same help.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nasforge.run import defaults
from nasforge.run.executors import DEFAULT_RETRIES

__all__ = ["DEFAULT_PLOT", "DEFAULT_RETRIES"]

OptionList = list[str] | None
#: Where a multi-objective run draws its front unless ``--plot`` says otherwise.
DEFAULT_PLOT = "pareto.png"

SpaceName = Annotated[
    str | None, typer.Option(help=f"Search space name (see `nasforge spaces`) (default: {defaults.SPACE}).")
]
StrategyName = Annotated[
    str | None,
    typer.Option(
        help="Strategy name (see `nasforge strategies`) (default: "
        f"{' if installed, else '.join(name for name, _ in defaults.STRATEGIES)})."
    ),
]
EvaluatorName = Annotated[
    str | None,
    typer.Option(
        help="Evaluator (see `nasforge evaluators`) "
        f"(default for ask/tell: {defaults.TABLE_EVALUATOR}, or {defaults.TRAINING_EVALUATOR} on a "
        "space the table does not hold; none for one-shot)."
    ),
]
TrainData = Annotated[
    str | None,
    typer.Option(
        help="Data networks are trained on (see `nasforge datasets`): a one-shot strategy's "
        "supernet, an evaluator that trains such as short-train; a dataset name, or the path of "
        "your own .npz/.pt/.safetensors file (x, y, optional x_test, y_test) or image folder "
        f"(one subfolder per class) (default: {defaults.TRAINING_DATASET})."
    ),
]
BenchmarkDataset = Annotated[
    str | None,
    typer.Option(
        help="Dataset of the benchmark the evaluator reports on, e.g. nb201-table's cifar10, "
        f"cifar100 or imagenet16-120 (default: {defaults.TABLE_DATASET} for {defaults.TABLE_EVALUATOR})."
    ),
]
Dataset = Annotated[
    str | None,
    typer.Option(
        help="One name for either, as before --train-data and --benchmark-dataset: the training "
        "data of a one-shot strategy or of an evaluator that trains, else the benchmark dataset."
    ),
]
Objectives = Annotated[
    OptionList,
    typer.Option(
        "--objective",
        help="What to optimise, NAME:max or NAME:min, e.g. latency_ms:min (repeatable; two or more "
        "need a multi-objective strategy such as nsga2 or mo-random, and the run returns a Pareto "
        "front) (default: the evaluator's objective).",
    ),
]
Constraints = Annotated[
    OptionList,
    typer.Option(
        "--constraint",
        help="A bound every reported architecture satisfies, NAME<=VALUE or NAME>=VALUE, e.g. "
        "'latency_ms<=12' (repeatable; quote it for the shell).",
    ),
]
BudgetTrials = Annotated[
    int | None, typer.Option(help="Stop after this many evaluated architectures (default: 100).")
]
BudgetSeconds = Annotated[float | None, typer.Option(help="Stop after this many wall seconds.")]
BudgetSimSeconds = Annotated[
    float | None, typer.Option(help="Stop after this many simulated seconds (tabular evaluators).")
]
StopWhen = Annotated[
    OptionList,
    typer.Option(
        "--stop-when",
        help="End the run early once a rule holds: NAME>=VALUE or NAME<=VALUE (a trial reached "
        "a target, e.g. 'valid_accuracy>=93'), time:SECONDS[:simulated] or plateau:TRIALS; "
        "join rules that must all hold with '&' (repeatable, any one stops; quote it for the "
        "shell). The journal records the rules and the reason the run stopped.",
    ),
]
StopAfterSeconds = Annotated[
    float | None,
    typer.Option(help="End the run early after this many wall seconds (the stop rule time:SECONDS)."),
]
StopPlateau = Annotated[
    int | None,
    typer.Option(
        min=1, help="End the run early once its best has not changed in this many trials (plateau:N)."
    ),
]
Seed = Annotated[
    int, typer.Option(help="Seed of the strategy, the evaluator and the data (runs are reproducible).")
]
RunDir = Annotated[
    Path | None, typer.Option(help="Journal directory (default: runs/SPACE-STRATEGY-sSEED-TIME).")
]
StrategyOptions = Annotated[
    OptionList,
    typer.Option(
        "--option", "-o", help="Strategy option key=value, e.g. -o population_size=20 or -o epochs=5."
    ),
]
EvaluatorOptions = Annotated[
    OptionList, typer.Option("--evaluator-option", help="Evaluator option key=value.")
]
SpaceOptions = Annotated[OptionList, typer.Option("--space-option", help="Space option key=value.")]
Workers = Annotated[int, typer.Option(min=1, help="Evaluations in flight at once (ask/tell).")]
ExecutorName = Annotated[
    str,
    typer.Option(help="Executor: inprocess, process or a registered one such as ray (`nasforge executors`)."),
]
Asynchronous = Annotated[
    bool,
    typer.Option(
        "--async/--sync",
        help="--async: keep --workers trials in flight and tell the strategy each result as it "
        "arrives (no waiting for a round's slowest trial; the journal keeps the order, so a resume "
        "replays it exactly, but two runs may differ). --sync (default): rounds of --workers trials, "
        "the same run whatever executor runs it.",
    ),
]
Retries = Annotated[
    int,
    typer.Option(
        "--retries",
        min=0,
        help="Run a trial whose worker died (process or cluster executor) again up to this many times; "
        "each retry is recorded in the trial's metadata, and a trial that still fails is a failed trial.",
    ),
]
Export = Annotated[
    Path | None,
    typer.Option(
        help="Also write the best architecture here: genotype.safetensors + model.onnx (of an "
        "ensemble search: manifest.json + member_NN.onnx, and ensemble.onnx with --fuse)."
    ),
]
ResumeExport = Annotated[
    Path | None, typer.Option("--export", help="Also export the best architecture here.")
]
ExportBuildOptions = Annotated[
    OptionList,
    typer.Option(
        "--build-option",
        help="Network option (e.g. C=16) for every network the run builds: the evaluator's, a "
        "strategy's scoring (hnas, eigennas) and --export.",
    ),
]
Plot = Annotated[
    Path | None,
    typer.Option(
        help="Draw a multi-objective run's Pareto front over every evaluated trial to this file "
        f"(png, svg, pdf; default: RUN_DIR/{DEFAULT_PLOT} when matplotlib is installed)."
    ),
]
Fuse = Annotated[
    bool,
    typer.Option(
        "--fuse/--no-fuse",
        help="With --export of an ensemble, also write ensemble.onnx: one graph running every member "
        "and averaging them, checked against onnxruntime.",
    ),
]
JsonOut = Annotated[bool, typer.Option("--json", help="Print the outcome as JSON to stdout.")]

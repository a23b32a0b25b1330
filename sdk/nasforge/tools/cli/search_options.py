"""The options of ``nasforge search`` and ``nasforge resume``, declared once as types.

Each is an ``Annotated`` type carrying its Typer option (flag, help, panel), so a
command's signature reads as a list of what it takes, and two commands that share an
option show the same help. ``search --help`` groups them in panels (search, budget and
stopping, data, execution, output) and fits 80 columns: help strings are one short
sentence with a short value name (``N``, ``NAME``, ``KEY=VALUE``); what does not fit in
a sentence is in the documentation's guide, not here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nasforge.kernel.executor_contract import DEFAULT_RETRIES
from nasforge.run import defaults
from nasforge.tools.cli.common_options import quiet_logs

__all__ = ["DEFAULT_PLOT", "DEFAULT_RETRIES", "PANELS"]

OptionList = list[str] | None
#: Where a multi-objective run draws its front unless ``--plot`` says otherwise.
DEFAULT_PLOT = "pareto.png"

#: The panels of ``nasforge search --help``, in the order they are shown.
SEARCH = "Search"
BUDGET = "Budget and stopping"
DATA = "Data"
EXECUTION = "Execution"
OUTPUT = "Output"
PANELS = (SEARCH, BUDGET, DATA, EXECUTION, OUTPUT)

_STRATEGIES = " if installed, else ".join(name for name, _ in defaults.STRATEGIES)

# -- search ---------------------------------------------------------------------------
SpaceName = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        rich_help_panel=SEARCH,
        help=f"Search space (`nasforge spaces`, or your own as PATH.py:NAME or module:NAME; "
        f"default: {defaults.SPACE}).",
    ),
]
StrategyName = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        rich_help_panel=SEARCH,
        help=f"Strategy (`nasforge strategies`; default: {_STRATEGIES}).",
    ),
]
EvaluatorName = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        rich_help_panel=SEARCH,
        help=f"Evaluator (`nasforge evaluators`; default: {defaults.TABLE_EVALUATOR}, or "
        f"{defaults.TRAINING_EVALUATOR} where the table lacks the space; none for one-shot).",
    ),
]
Objectives = Annotated[
    OptionList,
    typer.Option(
        "--objective",
        metavar="NAME:DIR",
        rich_help_panel=SEARCH,
        help="Optimise NAME:max or NAME:min (repeatable; two or more need a multi-objective "
        "strategy such as nsga2; default: the evaluator's).",
    ),
]
Constraints = Annotated[
    OptionList,
    typer.Option(
        "--constraint",
        metavar="BOUND",
        rich_help_panel=SEARCH,
        help="Keep NAME<=VALUE or NAME>=VALUE, e.g. 'params_mb<=0.5' (repeatable).",
    ),
]
Seed = Annotated[
    int,
    typer.Option(metavar="N", rich_help_panel=SEARCH, help="Seed of strategy, evaluator and data."),
]
StrategyOptions = Annotated[
    OptionList,
    typer.Option(
        "--option",
        "-o",
        metavar="KEY=VALUE",
        rich_help_panel=SEARCH,
        help="Strategy option, e.g. -o population_size=20.",
    ),
]
EvaluatorOptions = Annotated[
    OptionList,
    typer.Option("--evaluator-option", metavar="KEY=VALUE", rich_help_panel=SEARCH, help="Evaluator option."),
]
SpaceOptions = Annotated[
    OptionList,
    typer.Option("--space-option", metavar="KEY=VALUE", rich_help_panel=SEARCH, help="Search space option."),
]
ExportBuildOptions = Annotated[
    OptionList,
    typer.Option(
        "--build-option",
        metavar="KEY=VALUE",
        rich_help_panel=SEARCH,
        help="Network option, e.g. C=16, of every network the run builds or exports.",
    ),
]

# -- budget and stopping --------------------------------------------------------------
BudgetTrials = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        rich_help_panel=BUDGET,
        help="Stop after N evaluated architectures (default: 100).",
    ),
]
BudgetSeconds = Annotated[
    float | None,
    typer.Option(metavar="SECONDS", rich_help_panel=BUDGET, help="Stop after this many seconds."),
]
BudgetSimSeconds = Annotated[
    float | None,
    typer.Option(
        metavar="SECONDS",
        rich_help_panel=BUDGET,
        help="Stop after this many simulated seconds (tabular evaluators).",
    ),
]
StopWhen = Annotated[
    OptionList,
    typer.Option(
        "--stop-when",
        metavar="RULE",
        rich_help_panel=BUDGET,
        help="End early once a rule holds: NAME>=VALUE, NAME<=VALUE, time:SECONDS or "
        "plateau:TRIALS; '&' joins rules (repeatable).",
    ),
]
StopAfterSeconds = Annotated[
    float | None,
    typer.Option(
        metavar="SECONDS",
        rich_help_panel=BUDGET,
        help="End early after this many seconds (the rule time:SECONDS).",
    ),
]
StopPlateau = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        rich_help_panel=BUDGET,
        help="End early once the best has not changed in N trials.",
    ),
]

# -- data -----------------------------------------------------------------------------
Dataset = Annotated[
    str | None,
    typer.Option(
        metavar="NAME|PATH",
        rich_help_panel=DATA,
        help="The data: what networks train on (one-shot, short-train), else the benchmark's "
        "dataset (nb201-table: cifar10, cifar100, imagenet16-120).",
    ),
]
TrainData = Annotated[
    str | None,
    typer.Option(
        metavar="NAME|PATH",
        rich_help_panel=DATA,
        help="What networks train on: a dataset (`nasforge datasets`), a .npz, .pt or "
        f".safetensors file, or an image folder (default: {defaults.TRAINING_DATASET}).",
    ),
]
BenchmarkDataset = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        rich_help_panel=DATA,
        help=f"The benchmark's dataset alone (default: {defaults.TABLE_DATASET}).",
    ),
]

# -- execution ------------------------------------------------------------------------
SearchDevice = Annotated[
    str | None,
    typer.Option(
        "--device",
        metavar="DEVICE",
        rich_help_panel=EXECUTION,
        help="cpu, cuda or cuda:N, where networks are trained or scored (default: cpu).",
    ),
]
Workers = Annotated[
    int,
    typer.Option(min=1, metavar="N", rich_help_panel=EXECUTION, help="Trials in flight at once."),
]
ExecutorName = Annotated[
    str,
    typer.Option(
        metavar="NAME",
        rich_help_panel=EXECUTION,
        help="inprocess, process or a registered one such as ray (`nasforge executors`).",
    ),
]
Asynchronous = Annotated[
    bool,
    typer.Option(
        "--async/--sync",
        rich_help_panel=EXECUTION,
        help="Tell each result as it arrives (two runs may differ), or in rounds of --workers.",
    ),
]
SearchExecutorOptions = Annotated[
    OptionList,
    typer.Option(
        "--executor-option",
        "-x",
        metavar="KEY=VALUE",
        rich_help_panel=EXECUTION,
        help="The executor's own option, e.g. address=HOST:PORT (repeatable).",
    ),
]
Retries = Annotated[
    int,
    typer.Option(
        "--retries",
        min=0,
        metavar="N",
        rich_help_panel=EXECUTION,
        help="How often a trial whose worker died is run again.",
    ),
]

# -- output ---------------------------------------------------------------------------
RunDir = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        rich_help_panel=OUTPUT,
        help="Journal directory (default: a new one under runs/).",
    ),
]
Export = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        rich_help_panel=OUTPUT,
        help="Also write the best architecture here: its genotype and ONNX model.",
    ),
]
ResumeExport = Annotated[
    Path | None,
    typer.Option(
        "--export", metavar="DIR", rich_help_panel=OUTPUT, help="Also export the best architecture here."
    ),
]
Plot = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        rich_help_panel=OUTPUT,
        help=f"Draw a multi-objective run's Pareto front here (default: RUN_DIR/{DEFAULT_PLOT}).",
    ),
]
Fuse = Annotated[
    bool,
    typer.Option(
        "--fuse/--no-fuse",
        rich_help_panel=OUTPUT,
        help="Export an ensemble also as one fused ensemble.onnx.",
    ),
]
JsonOut = Annotated[
    bool, typer.Option("--json", rich_help_panel=OUTPUT, help="Print the outcome as JSON to stdout.")
]
SearchQuiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", rich_help_panel=OUTPUT, help="No progress bar; warnings only.", callback=quiet_logs
    ),
]

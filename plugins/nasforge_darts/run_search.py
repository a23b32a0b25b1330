"""One call from data to exported artefacts: search, journal, genotype file, ONNX model.

The command line (``python -m nasforge_darts search``) is a thin shell over
:func:`search_and_export`, so a pipeline embedding nasforge gets the same behaviour.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import attrs
import torch
from rich.console import Console

from nasforge.export import export_genotype, export_onnx
from nasforge.journal import JournalWriter, journal_path
from nasforge.registry import get_registry
from nasforge.result import SearchOutcome


@attrs.frozen
class SearchRun:
    """Where a search left its results."""

    outcome: SearchOutcome
    run_dir: Path
    genotype_file: Path
    onnx_file: Path | None
    onnx_max_abs_diff: float | None
    seconds: float


def eval_build_options(
    space_name: str, *, in_channels: int, num_classes: int, width: int, depth: int
) -> dict[str, Any]:
    """Build options of the exported stand-alone network for a space."""
    if space_name == "darts":
        return {"C": width, "layers": depth, "in_channels": in_channels,
                "num_classes": num_classes, "auxiliary": False}
    return {"C": width, "N": depth, "in_channels": in_channels, "num_classes": num_classes}


def search_and_export(
    *,
    space: str = "darts",
    strategy: str = "prdarts",
    dataset: str = "digits",
    run_dir: str | Path,
    seed: int = 0,
    strategy_options: dict[str, Any] | None = None,
    export_width: int = 16,
    export_depth: int = 5,
    onnx: bool = True,
    progress: bool = True,
    console: Console | None = None,
) -> SearchRun:
    """Run a one-shot ``strategy`` on ``space`` with ``dataset``; journal and export.

    Writes ``journal.jsonl`` (one trial per epoch), ``genotype.safetensors`` and, unless
    ``onnx=False``, ``model.onnx`` of the derived cell (checked against onnxruntime).
    """
    start = time.perf_counter()
    reg = get_registry()
    space_obj = reg.get("space", space)()
    data = reg.get("dataset", dataset).load(seed=seed)
    options = dict(strategy_options or {})
    strat = reg.get("strategy", strategy)(seed=seed, progress=progress, console=console, **options)
    run_dir = Path(run_dir)
    with JournalWriter(journal_path(run_dir)) as journal:
        journal.header({
            "space": space, "strategy": strategy, "dataset": dataset, "seed": seed,
            "strategy_options": options, "data_digest": data.digest(), "torch": torch.__version__,
        })
        outcome = strat.fit(space_obj, data, on_trial=journal.trial)
        journal.end({"best": space_obj.format(outcome.best), "produced_by": outcome.produced_by})
    genotype_file = export_genotype(outcome.best, run_dir / "genotype.safetensors", space_obj)
    onnx_file, diff = None, None
    if onnx:
        channels = data.input_shape[0] if len(data.input_shape) == 3 else 1
        build = eval_build_options(
            space, in_channels=channels, num_classes=data.num_classes,
            width=export_width, depth=export_depth,
        )
        report = export_onnx(
            outcome.best, run_dir / "model.onnx", space_obj,
            input_shape=(1, *data.input_shape), build_options=build,
        )
        onnx_file, diff = report.path, report.max_abs_diff
    summary = {
        "best": space_obj.format(outcome.best),
        "final_metrics": outcome.best_result.metadata["metrics"] if outcome.best_result else {},
        "produced_by": {k: v for k, v in outcome.produced_by.items() if k != "arch_parameters"},
    }
    (run_dir / "outcome.json").write_text(json.dumps(summary, indent=2, default=str))
    return SearchRun(outcome, run_dir, genotype_file, onnx_file, diff, time.perf_counter() - start)

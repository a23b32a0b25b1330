"""One call from data to exported artefacts: search, journal, genotype file, ONNX model.

The command line (``python -m nasforge_darts search``) is a thin shell over
:func:`search_and_export`, which adds CPU-sized defaults and a small export network to
the core's one-shot runner (``nasforge search`` runs the same search with the
strategy's own defaults), so the journal is the core's and ``nasforge resume``,
``inspect`` and ``export`` read it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console

from nasforge.api import build_spec, load_space
from nasforge.atomic_files import atomic_write_text
from nasforge.export import export_bundle
from nasforge.one_shot_run import run_one_shot
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
        return {
            "C": width,
            "layers": depth,
            "in_channels": in_channels,
            "num_classes": num_classes,
            "auxiliary": False,
        }
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
    spec = build_spec(space, strategy, dataset=dataset, seed=seed, strategy_options=strategy_options or {})
    run = run_one_shot(spec, run_dir=run_dir, progress=progress, console=console)
    outcome, data = run.outcome, run.data
    space_obj = load_space(space)
    run_dir = Path(run_dir)
    channels = data.input_shape[0] if len(data.input_shape) == 3 else 1
    build = eval_build_options(
        space, in_channels=channels, num_classes=data.num_classes, width=export_width, depth=export_depth
    )
    bundle = export_bundle(
        outcome.best, run_dir, space_obj, input_shape=(1, *data.input_shape), build_options=build, onnx=onnx
    )
    genotype_file = bundle.genotype_file
    onnx_file = bundle.onnx.path if bundle.onnx is not None else None
    diff = bundle.onnx.max_abs_diff if bundle.onnx is not None else None
    summary = {
        "best": space_obj.format(outcome.best),
        "final_metrics": outcome.best_result.metadata["metrics"] if outcome.best_result else {},
        "produced_by": {k: v for k, v in outcome.produced_by.items() if k != "arch_parameters"},
    }
    atomic_write_text(run_dir / "outcome.json", json.dumps(summary, indent=2, default=str))
    return SearchRun(outcome, run_dir, genotype_file, onnx_file, diff, time.perf_counter() - start)

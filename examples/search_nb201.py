"""Search NAS-Bench-201 with regularized evolution on the bundled table, then export.

    python examples/search_nb201.py [OUT_DIR]

Runs in about a second on a laptop CPU: the tabular evaluator looks accuracies up instead
of training, and charges a simulated clock instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nasforge import api
from nasforge.tools.export import export_genotype, export_onnx

out = Path(sys.argv[1] if len(sys.argv) > 1 else "example-out")
outcome = api.search(
    space="nb201",
    strategy="rea",
    evaluator="nb201-table",
    dataset="cifar10",
    trials=200,
    seed=0,
    run_dir=out / "run",  # journaled: `nasforge resume example-out/run` continues a killed run
)
space = api.load_space("nb201")
print("best cell:", space.format(outcome.best))
print("test accuracy:", outcome.best_result.objectives["test_accuracy"])
export_genotype(outcome.best, out / "best.safetensors", space)
report = export_onnx(outcome.best, out / "best.onnx", space)
print(f"ONNX written to {report.path}, max |torch - onnxruntime| = {report.max_abs_diff:.2e}")

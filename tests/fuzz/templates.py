"""Valid files the fuzzers start from, written once by the library itself.

Mutating real output (a journal the CLI wrote, a genotype file ``export`` wrote, an ONNX
model the exporter wrote) keeps the fuzzed inputs close to what users actually hold, and
means the templates follow the library when its formats change (a checksum field, a new
header key) instead of going stale.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz.harness import run_cli

#: Searches whose journals serve as templates: (name, argv after ``--run-dir DIR``).
JOURNAL_RUNS: dict[str, list[str]] = {
    "toy-rea": [
        "search",
        "--space",
        "toy",
        "--strategy",
        "rea",
        "--evaluator",
        "toy",
        "--budget-trials",
        "8",
    ],
    "nb201-rea": ["search", "--space", "nb201", "--strategy", "rea", "--evaluator", "nb201-table"]
    + ["--dataset", "cifar10", "--budget-trials", "8", "--seed", "2"],
    "nb201-local": ["search", "--space", "nb201", "--strategy", "local", "--evaluator", "nb201-table"]
    + ["--dataset", "cifar100", "--budget-trials", "12", "--seed", "3"],
    "nb201-darts": ["search", "--space", "nb201", "--strategy", "darts", "--dataset", "digits"]
    + ["-o", 'supernet={"C": 4, "N": 1}', "-o", "epochs=2", "-o", "max_batches=1", "-o", "batch_size=16"],
}
#: An HNAS run small enough for a fuzz input (a pool of 4, two BO steps, C=4 networks).
HNAS_ARGS = ["search", "--space", "nb201", "--strategy", "hnas", "--evaluator", "nb201-table"]
HNAS_ARGS += ["--dataset", "cifar10", "--budget-trials", "2", "-o", "steps=2"]
HNAS_ARGS += [
    "-o",
    "pool_size=4",
    "-o",
    "batch_size=4",
    "--build-option",
    "C=4",
    "--build-option",
    "N=1",
    "-q",
]


@dataclass
class Templates:
    """Bytes and texts of valid inputs, plus what made them."""

    root: Path
    genotype_files: dict[str, bytes] = field(default_factory=dict)  # space -> safetensors bytes
    genotype_texts: dict[str, str] = field(default_factory=dict)  # space -> canonical string
    journals: dict[str, str] = field(default_factory=dict)  # run name -> journal text
    onnx: bytes = b""
    pool_cache: str = ""
    spaces: dict[str, object] = field(default_factory=dict)

    def __repr__(self) -> str:  # hypothesis prints the fixtures of a failing example
        return f"Templates(root={str(self.root)!r})"

    def _repr_pretty_(self, printer: Any, _cycle: bool) -> None:  # ... through its pretty-printer
        printer.text(repr(self))

    def unfinished(self, name: str) -> str:
        """The journal of ``name`` as a kill would leave it: no end record, trials cut."""
        lines = [line for line in self.journals[name].split("\n") if line and '"type": "end"' not in line]
        return "\n".join(lines[: max(2, len(lines) // 2)]) + "\n"


def _check(argv: list[str], cwd: Path) -> None:
    outcome = run_cli(argv, cwd, timeout=300)
    if outcome.code != 0:
        raise RuntimeError(f"template command failed: nasforge {' '.join(argv)}\n{outcome.err}{outcome.tb}")


def build_templates(root: Path) -> Templates:
    """Write every template under ``root`` (a few seconds: one tiny DARTS run, one export)."""
    from nasforge.api import load_space
    from nasforge.tools.export import export_genotype

    root.mkdir(parents=True, exist_ok=True)
    t = Templates(root=root)
    for name in ("nb201", "darts", "toy"):
        space = load_space(name)
        t.spaces[name] = space
        g = space.sample(random.Random(11))
        t.genotype_texts[name] = space.format(g)
        path = export_genotype(g, root / f"{name}.safetensors", space)
        t.genotype_files[name] = Path(path).read_bytes()
    for name, argv in JOURNAL_RUNS.items():
        run_dir = root / "runs" / name
        shutil.rmtree(run_dir, ignore_errors=True)
        _check([*argv, "-q", "--run-dir", str(run_dir)], root)
        t.journals[name] = (run_dir / "journal.jsonl").read_text(encoding="utf-8")
    onnx_dir = root / "onnx"
    _check(
        ["export", t.genotype_texts["toy"], "--space", "toy", "--out", str(onnx_dir), "--input-shape", "1,8"],
        root,
    )
    t.onnx = (onnx_dir / "model.onnx").read_bytes()
    hnas_dir = root / "hnas"
    shutil.rmtree(hnas_dir, ignore_errors=True)
    hnas_dir.mkdir()
    _check([*HNAS_ARGS, "--run-dir", "r", "-o", "cache=pool.jsonl"], hnas_dir)
    t.pool_cache = (hnas_dir / "pool.jsonl").read_text(encoding="utf-8")
    return t

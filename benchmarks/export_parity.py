"""Random NB201 and DARTS cells through ``nasforge export``: how many pass the ONNX parity check.

Each cell is exported the way a user does it, by its genotype *string* on the command line
(the CLI entry point, run in-process), into a temporary directory, and must come back with
both files, its genotype file decoding to the same genotype. NAS-Bench-201 networks are
the benchmark's own size (C=16, N=5); DARTS networks are small (C=8, 5 cells, no
auxiliary head) so the run fits on one CPU core in a few minutes.

    python benchmarks/export_parity.py                 # 200 NB201 + 20 DARTS cells
    python benchmarks/export_parity.py --nb201 15 --darts 2

Each export is checked twice (see :mod:`nasforge.tools.export.onnx_export`): the file, which holds
the network as built, and a throw-away probe copy with randomised BatchNorm statistics.
Prints ``N/N passed``, the worst relative error (|diff| over the sample's largest logit),
the worst absolute difference and the largest share of the tolerance (atol + rtol x |logits|)
any cell used, each the worse of its two checks (what ``nasforge export --json`` reports),
and the seconds taken; exits 1 if any cell failed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge.api import load_space
from nasforge.kernel.genotype import Genotype
from nasforge.tools.cli import main as cli_main
from nasforge.tools.export import load_genotype

#: ``--build-option`` values per space (none: the space's own defaults).
BUILD_OPTIONS: dict[str, tuple[str, ...]] = {
    "nb201": (),
    "darts": ("C=8", "layers=5", "auxiliary=false"),
}


@attrs.frozen
class CellOutcome:
    space: str
    text: str
    passed: bool
    # Each the worse of the file's check and the randomised-BatchNorm probe's.
    max_abs_diff: float | None
    max_rel_error: float | None
    tolerance_used: float | None  # share of atol + rtol * |logits| the worst logit used
    error: str  # the CLI's stderr line, or what was wrong with its files


@attrs.frozen
class Sweep:
    outcomes: tuple[CellOutcome, ...]
    seconds: float

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def worst_rel(self) -> float:
        return max((o.max_rel_error or 0.0 for o in self.outcomes), default=0.0)

    @property
    def worst_abs(self) -> float:
        return max((o.max_abs_diff or 0.0 for o in self.outcomes), default=0.0)

    @property
    def most_tolerance_used(self) -> float:
        return max((o.tolerance_used or 0.0 for o in self.outcomes), default=0.0)

    def summary(self) -> str:
        n = len(self.outcomes)
        spaces = dict.fromkeys(o.space for o in self.outcomes)
        counts = ", ".join(f"{sum(o.space == s for o in self.outcomes)} {s}" for s in spaces)
        return (
            f"{self.passed}/{n} passed ({counts}); worst relative error {self.worst_rel:.2e}, "
            f"worst |diff| {self.worst_abs:.3g}; "
            f"at most {self.most_tolerance_used:.1%} of the tolerance used; {self.seconds:.1f} s"
        )


def sample_cells(space_name: str, count: int, seed: int) -> list[Genotype]:
    """``count`` distinct cells of a space, the same ones for the same seed."""
    space = load_space(space_name)
    rng = random.Random(seed)
    cells: dict[Genotype, None] = {}
    while len(cells) < count:
        cells[space.sample(rng)] = None
    return list(cells)


def export_through_cli(space_name: str, g: Genotype, out: Path) -> CellOutcome:
    """``nasforge export TEXT --space S --out OUT --json``, in-process, and check its files."""
    space = load_space(space_name)
    text = space.format(g)
    argv = ["export", text, "--space", space_name, "--out", str(out), "--json"]
    for option in BUILD_OPTIONS.get(space_name, ()):
        argv += ["--build-option", option]
    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            cli_main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    if code != 0:
        error = stderr.getvalue().strip() or f"exit {code}"
        return CellOutcome(space_name, text, False, None, None, None, error)
    report: dict[str, Any] = json.loads(stdout.getvalue())
    problem = _check_files(out, g)
    return CellOutcome(
        space_name,
        text,
        not problem,
        report.get("max_abs_diff"),
        report.get("max_rel_error"),
        report.get("tolerance_used"),
        problem,
    )


def _check_files(out: Path, g: Genotype) -> str:
    if not (out / "model.onnx").is_file():
        return "model.onnx missing"
    if not (out / "genotype.safetensors").is_file():
        return "genotype.safetensors missing"
    if load_genotype(out / "genotype.safetensors") != g:
        return "genotype file decodes to another genotype"
    return ""


def run_sweep(
    counts: dict[str, int],
    *,
    seed: int = 0,
    workdir: Path | None = None,
    on_cell: Callable[[int, CellOutcome], None] | None = None,
) -> Sweep:
    """Export ``counts[space]`` sampled cells of each space; every cell in its own folder."""
    start = time.perf_counter()
    outcomes: list[CellOutcome] = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for space_name, count in counts.items():
            for i, g in enumerate(sample_cells(space_name, count, seed)):
                outcome = export_through_cli(space_name, g, Path(tmp) / f"{space_name}-{i}")
                outcomes.append(outcome)
                if on_cell is not None:
                    on_cell(len(outcomes), outcome)
    return Sweep(tuple(outcomes), time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nb201", type=int, default=200, help="NAS-Bench-201 cells")
    parser.add_argument("--darts", type=int, default=20, help="DARTS cells")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    def progress(done: int, outcome: CellOutcome) -> None:
        if not outcome.passed:
            print(f"  FAILED {outcome.space} {outcome.text}: {outcome.error}", file=sys.stderr, flush=True)
        elif done % 20 == 0:
            print(f"  {done} exported", file=sys.stderr, flush=True)

    sweep = run_sweep({"nb201": args.nb201, "darts": args.darts}, seed=args.seed, on_cell=progress)
    print(sweep.summary())
    return 0 if sweep.passed == len(sweep.outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())

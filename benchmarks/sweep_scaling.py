"""Metric sweeps on several cores: in-process vs a process pool vs a local Ray cluster.

Scores the same NAS-Bench-201 cells (C=16, N=5, a 64-sample Gaussian batch, seed 0) three
ways, asserts the scores are identical, and prints each runner's wall time and speed-up
over in-process. Start-up (spawning workers, importing torch, starting Ray) is timed
apart, by a warm-up sweep of one chunk per worker, and the speed-up is printed both with
and without it. Targets on a quiet 2-core machine, with start-up: pool >= 1.6x, Ray >= 1.4x.
No cache is used, so every run computes every score.

``--all`` instead scores synflow on all 15,625 cells on the chosen runner and prints the
wall time and the Spearman rank correlation with the CIFAR-10 test accuracy of the
bundled table (targets: under 4 min on 2 cores, rho >= 0.77).

    python benchmarks/sweep_scaling.py                      # synflow, 2,000 cells, 2 workers
    python benchmarks/sweep_scaling.py --six                # grad_norm,snip,grasp,fisher,jacob_cov,synflow
    python benchmarks/sweep_scaling.py --cells 200 --no-ray # a quick look
    python benchmarks/sweep_scaling.py --all                # every cell, synflow, process pool

Timings on a shared machine are inflated (and speed-ups deflated) by other load: the
load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import resource
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nasforge import get_registry
from nasforge.tools.scoring import ScoreTable, oriented, sample_genotypes, score_genotypes, spearman
from nasforge.tools.scoring.parallel import SweepExecutor, make_sweep_executor

SIX = "grad_norm,snip,grasp,fisher,jacob_cov,synflow"
TABLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "nb201" / "nb201_full.csv"
TARGETS = {"process": 1.6, "ray": 1.4}


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def header(args: argparse.Namespace, metrics: list[str]) -> None:
    print(f"command: python {shlex.join(sys.argv)}")
    print(
        f"settings: nb201 C=16 N=5, batch {args.batch} gaussian, seed {args.seed}, "
        f"metrics {','.join(metrics)}, "
        f"workers {args.workers}, per_task {args.per_task or 'auto'}, in-process torch threads {args.threads}"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        f"({len(os.sched_getaffinity(0))} usable), torch {torch.__version__}, load average {load()} (before)"
    )


def sweep(
    space: Any,
    cells: list[Any],
    metrics: list[str],
    args: argparse.Namespace,
    runner: SweepExecutor | str,
    progress: Any = None,
) -> tuple[ScoreTable, float]:
    start = time.perf_counter()
    table = score_genotypes(
        space,
        cells,
        metrics,
        batch_size=args.batch,
        seed=args.seed,
        executor=runner,
        per_task=args.per_task,
        cache=None,
        registry=get_registry(),
        progress=progress,
    )
    return table, time.perf_counter() - start


def same(a: ScoreTable, b: ScoreTable) -> bool:
    """Bit-identical values (NaN equal to NaN) and the same flags, for every metric."""
    for m in a.metrics:
        if not np.array_equal(a.values(m), b.values(m), equal_nan=True):
            return False
        if [s.error for s in a.column(m)] != [s.error for s in b.column(m)]:
            return False
    return True


def timed_runner(name: str, args: argparse.Namespace, space: Any, warm: list) -> tuple[SweepExecutor, float]:
    """A started runner and its start-up seconds (made, then one warm-up chunk per worker).

    The warm-up scores synflow, whatever ``metrics`` are: it spawns the workers and imports
    torch and the metric plugins, which is what start-up means; with the six proxies the
    warm-up cells' own scoring (~3 s each) would otherwise be counted as start-up."""
    start = time.perf_counter()
    runner = make_sweep_executor(name, workers=args.workers)
    sweep(space, warm, ["synflow"], args, runner)
    return runner, time.perf_counter() - start


def scaling(args: argparse.Namespace) -> int:
    metrics = SIX.split(",") if args.six else args.metrics.split(",")
    header(args, metrics)
    registry = get_registry()
    space = registry.get("space", "nb201")()
    cells = sample_genotypes(space, args.cells, seed=args.seed)
    # warm-up cells are not in the timed sample, so no runner gets a head start
    warm = [
        g
        for g in sample_genotypes(space, args.cells + 4 * args.workers, seed=args.seed + 1)
        if g not in set(cells)
    ]
    warm = warm[: args.workers]
    torch.set_num_threads(args.threads)
    c0 = cpu_seconds(resource.RUSAGE_SELF)
    ref, t_in = sweep(space, cells, metrics, args, "inprocess")
    cpu_in = cpu_seconds(resource.RUSAGE_SELF) - c0
    print(
        f"\n{len(cells)} cells; in-process: {t_in:.1f} s ({len(cells) / t_in:.2f} cells/s), "
        f"{cpu_in:.1f} CPU s"
    )
    runners = ["process"] + ([] if args.no_ray else ["ray"])
    ok = True
    for name in runners:
        c_self, c_children = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
        runner, t_up = timed_runner(name, args, space, warm)
        try:
            table, t = sweep(space, cells, metrics, args, runner)
        finally:
            runner.close()  # the pool's workers are reaped here, so their CPU time is counted
        used = cpu_seconds(resource.RUSAGE_SELF) - c_self + cpu_seconds(resource.RUSAGE_CHILDREN) - c_children
        # Ray's workers are the raylet's children, not this process's: their CPU is not seen
        cpu_note = (
            f"{used:.1f} CPU s incl. start-up ({cpu_in / used:.2f} of it useful)" if name == "process" else ""
        )
        identical = same(ref, table)
        assert identical, f"{name}: scores differ from in-process"
        total = t + t_up
        target = TARGETS[name]
        met = t_in / total >= target
        ok &= met
        print(
            f"{name:>8} x{args.workers}: {t:.1f} s sweep + {t_up:.1f} s start-up = {total:.1f} s; "
            f"speed-up {t_in / total:.2f}x with start-up ({t_in / t:.2f}x without); "
            f"target >= {target}x: {'met' if met else 'NOT met'}; scores identical: {identical}"
            + (f"; {cpu_note}" if cpu_note else "")
        )
    print(f"load average {load()} (after)")
    return 0 if ok else 1


def accuracy_by_cell() -> dict[str, float]:
    with open(TABLE, newline="", encoding="utf-8") as fh:
        return {row["arch"]: float(row["cifar10_test"]) for row in csv.DictReader(fh)}


def whole_space(args: argparse.Namespace) -> int:
    metrics = ["synflow"]
    header(args, metrics)
    registry = get_registry()
    space = registry.get("space", "nb201")()
    cells = (
        list(space.enumerate())
        if args.subset is None
        else sample_genotypes(space, args.subset, seed=args.seed)
    )
    if args.subset is not None:
        print(f"SUBSET: {len(cells)} uniformly sampled cells, not the whole space (a smoke test of --all)")
    accuracy = accuracy_by_cell()
    last = [0.0]

    def progress(done: int, total: int, _g: Any) -> None:
        now = time.perf_counter()
        if now - last[0] >= 30 or done == total:
            last[0] = now
            print(f"  {done}/{total} cells, {now - start:.0f} s", flush=True)

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    runner = make_sweep_executor(
        args.executor, workers=None if args.executor == "inprocess" else args.workers
    )
    try:
        table, _ = sweep(space, cells, metrics, args, runner, progress)
    finally:
        runner.close()
    wall = time.perf_counter() - start
    targets = [accuracy[space.format(g)] for g in table.genotypes]
    rho = spearman(oriented(table.values("synflow"), True), targets)
    flagged = len(table.flagged("synflow"))
    whole = args.subset is None
    verdict = ("met" if wall < 240 else "NOT met") if whole else "n/a for a subset"
    print(
        f"\n{'all ' if whole else ''}{len(cells)} cells, synflow, {args.executor} x{runner.workers}: "
        f"wall {wall:.1f} s (incl. start-up; target < 240 s: {verdict}), {len(cells) / wall:.1f} cells/s"
    )
    print(
        f"Spearman vs CIFAR-10 test accuracy: {rho:.4f} "
        f"(target >= 0.77: {'met' if rho >= 0.77 else 'NOT met'}), {flagged} flagged"
    )
    print(f"load average {load()} (after)")
    return 0 if (not whole or wall < 240) and rho >= 0.77 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2000, help="NB201 cells to score (default 2000)")
    parser.add_argument("--metrics", default="synflow", help="comma-separated metrics (default synflow)")
    parser.add_argument("--six", action="store_true", help=f"the six zero-cost proxies: {SIX}")
    parser.add_argument("--workers", type=int, default=2, help="pool processes / Ray CPUs (default 2)")
    parser.add_argument("--per-task", type=int, default=None, help="cells per task (default: auto)")
    parser.add_argument("--batch", type=int, default=64, help="scoring batch size (default 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads in this process (default 1)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray runner")
    parser.add_argument("--all", action="store_true", help="synflow on all 15,625 cells, then Spearman")
    parser.add_argument("--executor", default="process", help="runner of --all (default process)")
    parser.add_argument(
        "--subset",
        type=int,
        default=None,
        help="with --all: a uniform sample of N cells instead (smoke test)",
    )
    args = parser.parse_args()
    return whole_space(args) if args.all else scaling(args)


if __name__ == "__main__":
    raise SystemExit(main())

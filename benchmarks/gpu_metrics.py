"""Every speed figure of GPU scoring in one run on a GPU machine, its CPU beside it (~6-8 min).

The steps (each with its own time bound, each guarded: a failure is reported and the
others still run), on NAS-Bench-201 networks at C=16, N=5, 3x32x32, batch 64:

1. ``cpu-synflow``: this machine's CPU-only sweep, ``nasforge score -m synflow --device cpu
   --executor process --workers <all CPUs>`` on a uniform sample (its rate is the baseline);
2. ``cuda-synflow``: ``nasforge score --all -m synflow --device cuda`` (15,625 cells; target
   <= 60 s, >= 2x the CPU's rate), scores equal to the CPU's to 1e-3, cell for cell;
3. ``cuda-synflow-workers``: the same with ``--workers <all CPUs>`` (target: never slower);
4. ``stages``: where a GPU sweep's time goes (build, pack, wait, move, arrange, score, cache);
5. ``cpu-six`` / ``cuda-six``: the six zero-cost proxies (grad_norm, snip, grasp, fisher,
   jacob_cov, synflow) CPU-only and on the GPU (1,000 cells; target >= 5x the CPU's rate),
   scores compared on the common cells; ``cuda-six-stacked``: the same with every proxy in
   stacks of networks (to compare: only synflow stacks by default);
6. ``ntk``: seconds a cell of ``eigennas_ntk_trace``, ``ntk_trace``, ``nasi_proxy`` and HNAS's
   M_Trace pool scoring (target: >= 15x faster than 0.83 s a cell);
7. ``real-oom``: the process's share of the card capped so that a modest batch runs out
   of memory for real: the shared pass splits and retries (recorded), scores equal to the
   unsplit pass; then a stack of networks under the cap is split and recorded.

``--steps`` adds the optional ``six-each`` (each of the six alone, one network a launch and
in stacks, and one GraSP network under the profiler), ``ntk-agree`` (``eigennas_ntk_trace``
on the device against the CPU, cell for cell), ``every`` (every metric, CUDA vs CPU, a few cells),
``reference`` (the six against the zero-cost-nas code) and ``one-shot`` steps. Every step
also runs on the CPU at a small size (``--device cpu --small``, a test), so the GPU
machine is never its first run; there the out-of-memory errors are simulated.

    python benchmarks/gpu_metrics.py --out $OUT               # on the GPU machine
    python benchmarks/gpu_metrics.py --device cpu --small     # the same steps, small, on a CPU

Each step's figures are printed and appended to ``<out>/gpu_metrics.jsonl`` as a record
keyed by its settings and the code's version (``benchmarks/records.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge import MetricContext, get_registry
from nasforge.kernel.device import exact_float32
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.scoring import (
    ScoreTable,
    SharedPasses,
    SharedPassMetric,
    resolve_metrics,
    sample_genotypes,
    score_genotypes,
    score_model,
)
from nasforge.tools.scoring import pipeline as pipeline_module
from nasforge.tools.scoring.parallel import ProcessSweep, available_cpus
from nasforge.tools.scoring.pipeline import StageTimes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import RecordFile, code_version  # noqa: E402

SIX = ("grad_norm", "snip", "grasp", "fisher", "jacob_cov", "synflow")
NTK = ("eigennas_ntk_trace", "ntk_trace", "nasi_proxy")
#: Seconds a cell of ``eigennas_ntk_trace`` on an H200 before this work (the target: 15x less).
NTK_BEFORE = 0.83
#: Relative agreement asked of CUDA and CPU scores (GraSP, a difference of large terms: looser).
AGREE = {"grasp": 5e-2}
AGREE_DEFAULT = 1e-3
PACKAGES = ("nasforge", "nasforge_nb201", "nasforge_zerocost", "nasforge_eigennas", "nasforge_hnas")


@attrs.frozen
class Scale:
    """The sizes of one run: ``full`` on the GPU machine, ``small`` for a CPU test."""

    name: str
    build: dict[str, int]
    every: int | None  # cells of the whole-space step (None: all 15,625)
    cpu_cells: int
    six_cells: int
    six_cpu_cells: int
    ntk_cells: int
    batch: int  # samples of the scoring batch
    oom_batch: int
    stack: int  # networks per stack when every proxy stacks
    budget: float  # seconds each step may take, at most
    each_cells: int = 32  # cells per proxy in ``six-each``
    agree_cells: int = 2  # cells of ``ntk-agree`` (the CPU side: seconds a cell)


FULL = Scale("full", {"C": 16, "N": 5}, None, 3000, 1000, 160, 4, 64, 2048, 16, 120.0)
SMALL = Scale("small", {"C": 4, "N": 1}, 12, 8, 4, 2, 2, 8, 64, 4, 120.0, each_cells=4, agree_cells=2)


class StepTimeout(Exception):
    """A step ran past its bound (raised from a sweep's progress callback)."""


def deadline(seconds: float) -> Callable[[int, int, Any], None]:
    """A progress callback that stops a sweep once ``seconds`` have passed."""
    end = time.perf_counter() + seconds

    def check(done: int, total: int, _g: Any) -> None:
        if time.perf_counter() > end:
            raise StepTimeout(f"stopped after {seconds:.0f} s at {done}/{total} cells")

    return check


class Run:
    """The steps of one invocation, their status and records."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.scale = SMALL if args.small else FULL
        self.device = args.device
        self.space = get_registry().space("nb201")
        self.cpus = args.workers or available_cpus()
        self.results: list[tuple[str, str, float]] = []
        self.state: dict[str, Any] = {}
        args.out.mkdir(parents=True, exist_ok=True)
        self.records = RecordFile(args.out / "gpu_metrics.jsonl", code_version(*PACKAGES))
        self.machine = {
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name() if self.device.startswith("cuda") else "cpu",
            "cpus": available_cpus(),
        }

    def step(self, name: str, fn: Callable[[], dict[str, Any]]) -> None:
        print(f"\n== {name}", flush=True)
        start = time.perf_counter()
        try:
            figures = fn()
            status = "ok   " + figures.pop("note", "")
        except Exception as exc:  # reported, never fatal: the other steps still run
            traceback.print_exc()
            figures = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
            status = "FAIL " + figures["error"]
        seconds = time.perf_counter() - start
        self.results.append((name, status, seconds))
        print(f"[{seconds:7.1f} s] {name}: {status}", flush=True)
        settings = {"step": name, "scale": self.scale.name, "device": self.device, **self.machine}
        self.records.append(settings, {**figures, "status": status.split()[0], "seconds": seconds})

    # --- helpers ---------------------------------------------------------------------------
    def cli(self, argv: list[str], budget: float) -> tuple[dict[str, Any], float]:
        """``nasforge score ... --json`` in a new process, as a user runs it: its output and
        wall time (Python start-up included)."""
        cmd = [
            sys.executable,
            "-m",
            "nasforge",
            "score",
            "--space",
            "nb201",
            "--no-cache",
            "--quiet",
            "--json",
        ]
        for k, v in self.scale.build.items():
            cmd += ["--build-option", f"{k}={v}"]
        cmd += ["--batch-size", str(self.scale.batch)]
        cmd += argv
        print("   $ " + " ".join(cmd[1:]), flush=True)
        start = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget, check=False)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            raise RuntimeError(f"exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}")
        return json.loads(out.stdout), wall

    def score_one(
        self, cells: list[Any], metric: str, seconds: float, stack: int | None = None
    ) -> ScoreTable:
        """``metric`` alone on ``cells`` in this process (its own seconds, no pass shared)."""
        s = self.scale
        return score_genotypes(
            self.space,
            cells,
            [metric],
            batch_size=s.batch,
            build=s.build,
            device=self.device,
            pipeline=True,
            stack=stack,
            progress=deadline(seconds),
        )

    @staticmethod
    def by_cell(payload: dict[str, Any]) -> dict[str, dict[str, float]]:
        return {
            row["text"]: {m: float(s["value"]) for m, s in row["scores"].items()} for row in payload["rows"]
        }

    def cells(self, n: int | None, seed: int = 0) -> list[Any]:
        return list(self.space.enumerate()) if n is None else sample_genotypes(self.space, n, seed=seed)

    def agree(self, mine: dict[str, dict[str, float]], other: dict[str, dict[str, float]]) -> dict[str, Any]:
        """Cell-for-cell agreement of two score sets on their common cells, per metric."""
        common = sorted(set(mine) & set(other))
        worst: dict[str, float] = {}
        bad: list[str] = []
        for cell in common:
            for m, a in mine[cell].items():
                b = other[cell].get(m)
                if b is None:
                    continue
                if not (math.isfinite(a) and math.isfinite(b)):
                    if math.isfinite(a) != math.isfinite(b):
                        bad.append(f"{m} {cell}: {a} vs {b}")
                    continue
                rel = abs(a - b) / max(abs(a), abs(b), 1e-30)
                worst[m] = max(worst.get(m, 0.0), rel)
                if rel > AGREE.get(m, AGREE_DEFAULT):
                    bad.append(f"{m} {cell}: {a:.6g} vs {b:.6g}")
        return {
            "common": len(common),
            "largest_relative_difference": worst,
            "disagree": bad[:5],
            "n_bad": len(bad),
        }


def table_scores(space: Any, table: ScoreTable) -> dict[str, dict[str, float]]:
    return {
        space.format(g): {m: row[m].value for m in table.metrics}
        for g, row in zip(table.genotypes, table.rows, strict=True)
    }


# --- the steps ---------------------------------------------------------------------------------
def cpu_synflow(run: Run) -> dict[str, Any]:
    s = run.scale
    payload, wall = run.cli(
        [
            "-m",
            "synflow",
            "--sample",
            str(s.cpu_cells),
            "--device",
            "cpu",
            "--executor",
            "process",
            "--workers",
            str(run.cpus),
        ],
        s.budget,
    )
    run.state["cpu-synflow"] = run.by_cell(payload)
    rate = s.cpu_cells / wall
    run.state["cpu-synflow-rate"] = rate
    return {
        "cells": s.cpu_cells,
        "wall": wall,
        "cells_per_s": rate,
        "workers": run.cpus,
        "note": f"{s.cpu_cells} cells in {wall:.1f} s: {rate:.1f} cells/s ({run.cpus} workers, start-up in)",
    }


def cuda_synflow(run: Run, workers: bool) -> dict[str, Any]:
    s = run.scale
    size = ["--all"] if s.every is None else ["--sample", str(s.every)]
    extra = ["--workers", str(run.cpus)] if workers else []
    if workers and not run.device.startswith("cuda"):  # on the CPU, workers score: a pool
        extra += ["--executor", "process"]
    payload, wall = run.cli(["-m", "synflow", *size, "--device", run.device, *extra], s.budget)
    n = len(payload["rows"])
    rate = n / wall
    figures: dict[str, Any] = {"cells": n, "wall": wall, "cells_per_s": rate}
    note = f"{n} cells in {wall:.1f} s: {rate:.1f} cells/s"
    if "cpu-synflow-rate" in run.state:
        figures["vs_cpu"] = rate / run.state["cpu-synflow-rate"]
        note += f", {figures['vs_cpu']:.2f}x the CPU-only rate (target >= 2)"
    if s.every is None:
        note += f"; target <= 60 s: {'met' if wall <= 60 else 'NOT met'}"
    if "cpu-synflow" in run.state:
        figures["agreement"] = run.agree(run.by_cell(payload), run.state["cpu-synflow"])
        a = figures["agreement"]
        note += (
            f"; vs CPU on {a['common']} cells: largest rel. diff "
            f"{a['largest_relative_difference'].get('synflow', float('nan')):.1e}, {a['n_bad']} over 1e-3"
        )
    key = "cuda-synflow-workers" if workers else "cuda-synflow"
    run.state[key] = wall
    if workers and "cuda-synflow" in run.state:
        figures["vs_alone"] = run.state["cuda-synflow"] / wall
        note += f"; {figures['vs_alone']:.2f}x the speed of --device {run.device} alone (target >= 1)"
    figures["note"] = note
    return figures


def stages(run: Run) -> dict[str, Any]:
    """In this process, with the pipeline's stage times: where the seconds go."""
    s = run.scale
    cells = run.cells(s.cpu_cells if s.every is None else s.every, seed=1)
    times = StageTimes()
    start = time.perf_counter()
    stack = None if run.device.startswith("cuda") else s.stack  # (the CPU stacks nothing unasked)
    score_genotypes(
        run.space,
        cells,
        ["synflow"],
        build=s.build,
        device=run.device,
        pipeline=True,
        stack=stack,
        stages=times,
        progress=deadline(s.budget),
    )
    wall = time.perf_counter() - start
    print("   " + times.summary(), flush=True)
    return {"cells": len(cells), "wall": wall, "stages": times.as_dict(), "note": times.summary()}


def cpu_six(run: Run) -> dict[str, Any]:
    s = run.scale
    metrics = [a for m in SIX for a in ("-m", m)]
    payload, wall = run.cli(
        [
            *metrics,
            "--sample",
            str(s.six_cpu_cells),
            "--device",
            "cpu",
            "--executor",
            "process",
            "--workers",
            str(run.cpus),
        ],
        s.budget,
    )
    run.state["cpu-six"] = run.by_cell(payload)
    rate = s.six_cpu_cells / wall
    run.state["cpu-six-rate"] = rate
    return {
        "cells": s.six_cpu_cells,
        "wall": wall,
        "cells_per_s": rate,
        "note": f"{s.six_cpu_cells} cells in {wall:.1f} s: {rate:.2f} cells/s ({run.cpus} workers)",
    }


def cuda_six(run: Run, stacked: bool) -> dict[str, Any]:
    s = run.scale
    if not stacked:
        metrics = [a for m in SIX for a in ("-m", m)]
        pool = [] if run.device.startswith("cuda") else ["--executor", "process"]
        payload, wall = run.cli(
            [
                *metrics,
                "--sample",
                str(s.six_cells),
                "--device",
                run.device,
                "--workers",
                str(run.cpus),
                *pool,
            ],
            s.budget,
        )
        scores = run.by_cell(payload)
        times = None
    else:
        cells = run.cells(s.six_cells)
        times = StageTimes()
        with ProcessSweep(run.cpus) as pool:
            start = time.perf_counter()
            table = score_genotypes(
                run.space,
                cells,
                list(SIX),
                batch_size=s.batch,
                build=s.build,
                device=run.device,
                executor=pool,
                pipeline=True,
                stack=s.stack,
                stages=times,
                progress=deadline(s.budget),
            )
            wall = time.perf_counter() - start
        scores = table_scores(run.space, table)
        print("   " + times.summary(), flush=True)
    rate = len(scores) / wall
    figures: dict[str, Any] = {"cells": len(scores), "wall": wall, "cells_per_s": rate}
    note = f"{len(scores)} cells in {wall:.1f} s: {rate:.2f} cells/s"
    if times is not None:
        figures["stages"] = times.as_dict()
        note += f" (stacks of {s.stack}, in this process)"
    if "cpu-six-rate" in run.state:
        figures["vs_cpu"] = rate / run.state["cpu-six-rate"]
        note += f", {figures['vs_cpu']:.2f}x the CPU-only rate (target >= 5)"
    if "cpu-six" in run.state:
        figures["agreement"] = run.agree(scores, run.state["cpu-six"])
        note += (
            f"; vs CPU on {figures['agreement']['common']} cells: {figures['agreement']['n_bad']} disagree"
        )
    figures["note"] = note
    return figures


def ntk(run: Run) -> dict[str, Any]:
    s = run.scale
    cells = run.cells(s.ntk_cells, seed=2)
    figures: dict[str, Any] = {}
    for name in NTK:  # each alone: its own seconds, no pass shared with another
        table = run.score_one(cells, name, s.budget / 4)
        seconds = [r[name].seconds for r in table.rows]
        figures[name] = {
            "median_s": statistics.median(seconds),
            "each_s": seconds,
            "speedup_vs_before": NTK_BEFORE / statistics.median(seconds),
        }
    figures["hnas_m_trace"] = _hnas_pool_seconds(run, cells)
    e = figures["eigennas_ntk_trace"]["median_s"]
    whole = 15_625 * e / 60
    figures["note"] = (
        ", ".join(f"{n} {figures[n]['median_s']:.3f} s" for n in NTK)
        + f", HNAS M_Trace {figures['hnas_m_trace']['median_s']:.3f} s a cell (median); eigennas_ntk_trace "
        f"{NTK_BEFORE / e:.1f}x faster than {NTK_BEFORE} s (target >= 15): the whole space in {whole:.1f} min"
    )
    return figures


def _hnas_pool_seconds(run: Run, cells: list[Any]) -> dict[str, Any]:
    """Seconds a cell of HNAS's pool scoring (M_Trace and kappa on the code's kernel)."""
    from nasforge_hnas import PoolCache, PoolScorer, PoolSettings, ScoredPool

    settings = PoolSettings(
        input_shape=(3, 32, 32),
        num_classes=10,
        build=dict(run.scale.build),
        batch_size=run.scale.batch,
        kernel_output="target",
        kernel_bn="decomposed",
        kernel_params="layers",
        device=run.device,
    )
    store = PoolCache(run.args.out / f"hnas-pool-{os.getpid()}.jsonl")
    try:
        pool = ScoredPool()
        PoolScorer(run.space, settings, store).fill(pool, cells)
        seconds = [float(x) for x in pool.seconds]
    finally:
        (run.args.out / f"hnas-pool-{os.getpid()}.jsonl").unlink(missing_ok=True)
    return {"median_s": statistics.median(seconds), "each_s": seconds}


def real_oom(run: Run) -> dict[str, Any]:
    """The shared pass's split, then a stack's: real on CUDA (the card capped), simulated on the CPU."""
    on_cuda = run.device.startswith("cuda")
    figures = {"pass": _oom_pass(run, on_cuda), "stack": _oom_stack(run, on_cuda)}
    p, st = figures["pass"], figures["stack"]
    figures["note"] = (
        f"{'real' if on_cuda else 'simulated'}: batch {p['batch']} split {p['retries']}, scores equal "
        f"{p['equal']}; stack splits {st['splits']}, scores equal {st['equal']}"
    )
    if not (p["equal"] and st["equal"] and p["retries"] and st["splits"]):
        raise AssertionError(figures["note"])
    return figures


def _capped(fraction: float) -> Any:
    class Cap:
        def __enter__(self) -> None:
            torch.cuda.empty_cache()
            torch.cuda.set_per_process_memory_fraction(fraction)

        def __exit__(self, *exc: object) -> None:
            torch.cuda.set_per_process_memory_fraction(1.0)
            torch.cuda.empty_cache()

    return Cap()


def _oom_pass(run: Run, on_cuda: bool) -> dict[str, Any]:
    metrics = [m for m in resolve_metrics(["grad_norm", "snip", "grasp"]) if isinstance(m, SharedPassMetric)]
    needs = frozenset().union(*(m.requirements for m in metrics))
    g = run.cells(1, seed=5)[0]
    n = run.scale.oom_batch
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, 3, 32, 32, generator=gen), torch.randint(0, 10, (n,), generator=gen)
    ctx = MetricContext(device=run.device)

    def network() -> torch.nn.Module:  # eval mode: samples independent, so a split is exact
        net = seeded_build(lambda: run.space.build(g, **run.scale.build), 0)
        return net.to(run.device).eval()

    with exact_float32():
        if on_cuda:
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        whole = SharedPasses(network(), (x, y), ctx, needs=needs)
        want = {m.name: m.score_shared(whole) for m in metrics}
        if on_cuda:
            peak = torch.cuda.max_memory_allocated() - base
            total = torch.cuda.get_device_properties(0).total_memory
            del whole
            torch.cuda.empty_cache()
            fraction = (torch.cuda.memory_allocated() + peak / 3) / total
            with _capped(fraction):
                start = time.perf_counter()
                split = SharedPasses(network(), (x, y), ctx, needs=needs)
                got = {m.name: m.score_shared(split) for m in metrics}
                seconds = time.perf_counter() - start
            cap = f"{fraction:.4f} of {total / 2**30:.0f} GiB (unsplit peak {peak / 2**30:.2f} GiB)"
        else:
            original = SharedPasses._run_whole
            SharedPasses._run_whole = _out_of_memory  # type: ignore[method-assign]
            try:
                start = time.perf_counter()
                split = SharedPasses(network(), (x, y), ctx, needs=needs, main_chunk=n)
                got = {m.name: m.score_shared(split) for m in metrics}
                seconds = time.perf_counter() - start
            finally:
                SharedPasses._run_whole = original  # type: ignore[method-assign]
            cap = "simulated"
    equal = all(
        math.isclose(got[k], v, rel_tol=1e-2 if k == "grasp" else 1e-4, abs_tol=1e-9) for k, v in want.items()
    )
    return {
        "batch": n,
        "retries": split.oom_retries,
        "chunk": split.main_chunk,
        "cap": cap,
        "seconds": seconds,
        "want": want,
        "got": got,
        "equal": equal,
    }


def _out_of_memory(self: Any, *_a: Any) -> Any:
    raise torch.OutOfMemoryError("out of memory (simulated: the whole batch does not fit)")


def _oom_stack(run: Run, on_cuda: bool) -> dict[str, Any]:
    s = run.scale
    cells = run.cells(4 * s.stack, seed=6)
    kw: dict[str, Any] = {
        "build": s.build,
        "device": run.device,
        "pipeline": True,
        "batch_size": min(16, s.batch),
    }
    if on_cuda:
        torch.cuda.reset_peak_memory_stats()
    whole = score_genotypes(run.space, cells, list(SIX[:-1]), stack=4 * s.stack, **kw)
    times = StageTimes()
    if on_cuda:
        peak = torch.cuda.max_memory_allocated()
        total = torch.cuda.get_device_properties(0).total_memory
        with _capped(peak / 5 / total):
            split = score_genotypes(run.space, cells, list(SIX[:-1]), stack=4 * s.stack, stages=times, **kw)
    else:
        real = pipeline_module.score_stack

        def small_device(module: Any, count: int, *a: Any, **k: Any) -> Any:
            if count > s.stack // 2:
                raise torch.OutOfMemoryError("out of memory (simulated)")
            return real(module, count, *a, **k)

        pipeline_module.score_stack = small_device  # type: ignore[assignment]
        try:
            split = score_genotypes(run.space, cells, list(SIX[:-1]), stack=4 * s.stack, stages=times, **kw)
        finally:
            pipeline_module.score_stack = real  # type: ignore[assignment]
    agreement = run.agree(table_scores(run.space, split), table_scores(run.space, whole))
    return {
        "cells": len(cells),
        "splits": times.splits,
        "equal": agreement["n_bad"] == 0,
        "agreement": agreement,
    }


def six_each(run: Run) -> dict[str, Any]:
    """Each of the six proxies alone, one network a launch and in stacks, in this process:
    which proxy holds the six back, and whether stacking helps it; then one GraSP network
    under the profiler (kernel launches and the kernels that take the time)."""
    s = run.scale
    cells = run.cells(s.each_cells, seed=8)
    figures: dict[str, Any] = {}
    for name in SIX:
        row: dict[str, Any] = {}
        for label, stack in (("alone", None), ("stacked", s.stack)):
            start = time.perf_counter()
            table = run.score_one(cells, name, s.budget / 12, stack=stack)
            wall = time.perf_counter() - start
            row[label] = {"cells": len(table.rows), "wall": wall, "cells_per_s": len(table.rows) / wall}
        figures[name] = row
        print(
            f"   {name}: {row['alone']['cells_per_s']:.1f} cells/s alone, "
            f"{row['stacked']['cells_per_s']:.1f} in stacks of {s.stack}",
            flush=True,
        )
    figures["grasp_profile"] = _grasp_profile(run, cells[0])
    figures["note"] = ", ".join(
        f"{n} {figures[n]['alone']['cells_per_s']:.1f}/{figures[n]['stacked']['cells_per_s']:.1f}"
        for n in SIX
    ) + (
        f" cells/s (alone/stacked); GraSP network: {figures['grasp_profile']['launches']} kernel "
        f"launches, {figures['grasp_profile']['seconds']:.3f} s"
    )
    return figures


def _grasp_profile(run: Run, genotype: Any) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    gen = torch.Generator().manual_seed(0)
    n = run.scale.batch
    x, y = torch.randn(n, 3, 32, 32, generator=gen), torch.randint(0, 10, (n,), generator=gen)
    metrics = resolve_metrics(["grasp"])
    ctx = MetricContext(device=run.device)

    def once() -> None:
        net = seeded_build(lambda: run.space.build(genotype, **run.scale.build), 0).to(run.device).train()
        score_model(net, (x.to(run.device), y.to(run.device)), metrics, ctx=ctx)

    once()
    on_cuda = run.device.startswith("cuda")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        once()
        if on_cuda:
            torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    events = prof.key_averages()
    launches = sum(
        e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC")
    )
    aten = sum(e.count for e in events if e.key.startswith("aten::"))
    sort = "self_device_time_total" if on_cuda else "self_cpu_time_total"
    table = events.table(sort_by=sort, row_limit=12)
    print(table, flush=True)
    return {"launches": launches, "aten_calls": aten, "seconds": seconds, "table": table}


def ntk_agree(run: Run) -> dict[str, Any]:
    """``eigennas_ntk_trace`` on this device against the CPU, cell for cell (batch of the scale)."""
    s = run.scale
    cells = run.cells(s.agree_cells, seed=9)
    got = {}
    for device in (run.device, "cpu"):
        table = score_genotypes(
            run.space, cells, ["eigennas_ntk_trace"], batch_size=s.batch, build=s.build, device=device
        )
        got[device] = table_scores(run.space, table)
    a = run.agree(got[run.device], got["cpu"])
    worst = a["largest_relative_difference"].get("eigennas_ntk_trace", float("nan"))
    return {
        "agreement": a,
        "note": f"{a['common']} cells: largest rel. diff {worst:.1e}, {a['n_bad']} over 1e-3",
    }


# --- the optional steps of the earlier script ----------------------------------------------
def every_metric(run: Run) -> dict[str, Any]:
    registry = get_registry()
    names = [n for n in registry.names("metric") if not registry.get("metric", n).info.population]
    metrics = resolve_metrics(names)
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(16, 3, 32, 32, generator=gen), torch.randint(0, 10, (16,), generator=gen)
    got: dict[str, dict[str, dict[str, float]]] = {"cpu": {}, run.device: {}}
    for g in run.cells(2, seed=7):
        for device in got:
            net = seeded_build(lambda g=g: run.space.build(g, **run.scale.build), 0).to(device).train()
            row = score_model(net, (x.to(device), y.to(device)), metrics, ctx=MetricContext(device=device))
            got[device][run.space.format(g)] = {k: v.value for k, v in row.items()}
    a = run.agree(got[run.device], got["cpu"])
    return {"agreement": a, "note": f"{len(metrics)} metrics: {a['n_bad']} disagree beyond the bounds"}


def reference(run: Run) -> dict[str, Any]:
    import metrics_speed

    ns = argparse.Namespace(
        archs=run.scale.ntk_cells,
        batch=64,
        metrics=None,
        seed=0,
        threads=torch.get_num_threads(),
        device=run.device,
        compare_reference=True,
        reference_path=run.args.reference_path,
    )
    metrics_speed.compare_reference(ns)
    return {"note": "printed above"}


def one_shot(run: Run) -> dict[str, Any]:
    from nasforge import api

    registry = get_registry()
    out = {}
    for name, options in ONE_SHOT.items():
        if name in registry.names("strategy"):
            out[name] = str(api.search(strategy=name, device=run.device, strategy_options=options).best)
    return {"best": out, "note": ", ".join(out)}


ONE_SHOT: dict[str, dict[str, int]] = {
    "darts": {"epochs": 1},
    "prdarts": {"epochs": 1},
    "simplex": {"epochs": 1},
    "nasi": {"steps": 10},
    "nesbs": {"supernet_epochs": 1, "posterior_epochs": 1},
}

STEPS: dict[str, Callable[[Run], dict[str, Any]]] = {
    "cpu-synflow": cpu_synflow,
    "cuda-synflow": lambda run: cuda_synflow(run, workers=False),
    "cuda-synflow-workers": lambda run: cuda_synflow(run, workers=True),
    "stages": stages,
    "cpu-six": cpu_six,
    "cuda-six": lambda run: cuda_six(run, stacked=False),
    "cuda-six-stacked": lambda run: cuda_six(run, stacked=True),
    "ntk": ntk,
    "real-oom": real_oom,
    "six-each": six_each,
    "ntk-agree": ntk_agree,
    "every": every_metric,
    "reference": reference,
    "one-shot": one_shot,
}
DEFAULT = tuple(list(STEPS)[:9])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu for a test run")
    parser.add_argument("--small", action="store_true", help="small networks and samples (a CPU test)")
    parser.add_argument("--steps", default=",".join(DEFAULT), help=f"comma-separated, of: {', '.join(STEPS)}")
    parser.add_argument("--workers", type=int, default=None, help="CPU processes (default: every usable CPU)")
    parser.add_argument("--out", type=Path, default=Path("runs/gpu"), help="where the records go")
    parser.add_argument(
        "--reference-path",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "peers" / "zero-cost-nas",
    )
    args = parser.parse_args(argv)
    chosen = [s for s in args.steps.split(",") if s]
    unknown = [s for s in chosen if s not in STEPS]
    if unknown:
        print(f"--steps: unknown {', '.join(unknown)} (known: {', '.join(STEPS)})", file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(
            "no CUDA device here: run with --device cpu --small, or on a machine with a CUDA GPU",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(1)
    run = Run(args)
    print(
        f"torch {torch.__version__}, {run.machine['device']}, {run.machine['cpus']} CPUs, "
        f"scale {run.scale.name}"
    )
    for name in chosen:
        run.step(name, lambda name=name: STEPS[name](run))
    print("\nsummary:")
    for name, status, seconds in run.results:
        print(f"  {seconds:7.1f} s  {name}: {status}")
    return 1 if any(status.startswith("FAIL") for _, status, _ in run.results) else 0


if __name__ == "__main__":
    random.seed(0)
    raise SystemExit(main())

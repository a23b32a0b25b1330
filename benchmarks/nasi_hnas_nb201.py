"""NASI and HNAS on NAS-Bench-201 with the bundled table, data-agnostic, next to the papers.

Issue 5's "Must show": over 5 seeds, the mean test accuracy of NASI's derived cell and of
HNAS's best cell (20 BO steps) on CIFAR-10, CIFAR-100 and ImageNet16-120, with search
time, printed next to the papers' numbers; and HNAS against random search with the
same number of table queries.

Settings (all stated, none tuned to a target):
- Data-agnostic: every training-free number comes from N(0, I) inputs of shape 3x16x16
  with uniform random labels; no dataset is read.
- Proxy networks keep the benchmark's depth (N = 5 cells per stage) at width C = 8 and
  16x16 inputs, so a CPU can afford them (paper: C = 16, 32x32). At N = 1 the NASI proxy
  barely tracks accuracy (Spearman 0.15 over 120 cells); at N = 5 it is 0.52 at C = 8,
  as at the paper's scale (0.55), so depth is kept and width and resolution are cut.
- NASI: research note A15 (μ = 1, adaptive ν with ν₀ from eq. 40, T = 100, b = 64, all
  five ops); one search per seed with 10 classes, its cell read on all three datasets.
- HNAS: M_Trace and κ of one NTK (label-free sum of logits, m = 64); pool of 500
  uniform draws per seed; 20 BO steps (5 initial probes, EI), F = |x|, normalised
  (μ, ν) plane. Each BO step is one nb201-table query; the evaluator follows the benchmark
  protocol (the 200-epoch validation accuracy is observed, the chosen cell's test accuracy
  reported). Figures recorded before the table had a validation column observed test.
- Random search: the registered ``random`` strategy with the same 20 table queries.

Runs are appended to ``--results`` (JSON lines) and skipped when already there with the
same settings and the same code (``benchmarks/records.py``: a digest of the sources of
the packages that compute each method's numbers), so the methods can run in separate
invocations and a code change re-runs what it affects; ``--recompute`` ignores earlier
records. The table is printed from the file.

    python benchmarks/nasi_hnas_nb201.py --seeds 5
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from records import RecordFile, code_version, run_and_record

from nasforge import api
from nasforge.budget import Budget
from nasforge.experiment import Experiment
from nasforge.spec import ExperimentSpec
from nasforge_hnas import Hnas, PoolCache
from nasforge_nasi import Nasi
from nasforge_nb201.evaluator import NB201TableEvaluator
from nasforge_nb201.space import NB201Space
from nasforge_nb201.table import load_table

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
INPUT = (3, 16, 16)
BUILD = {"C": 8, "N": 5}
NASI_OPTIONS = {"steps": 100, "batch_size": 64, "mu": 1.0, "mode": "ada", "calibration_samples": 50}
HNAS_STEPS = 20

PAPER = {
    "NASI (T), paper": ((93.08, 0.24), (69.51, 0.59), (40.87, 0.85), "30 GPU-s (1080Ti)"),
    "NASI (4T), paper": ((93.55, 0.10), (71.20, 0.14), (44.84, 1.41), "120 GPU-s (1080Ti)"),
    "HNAS (M_Trace), paper": ((94.07, 0.10), (72.30, 0.70), (45.93, 0.37), "3006 GPU-s (1080Ti)"),
    "RS, NB201 paper": ((93.70, 0.36), (71.04, 1.07), (44.57, 1.25), "12000 s simulated"),
    "optimum": ((94.37, 0.0), (73.51, 0.0), (47.31, 0.0), "-"),
}


def hnas_options(cache: str, pool_size: int) -> dict[str, Any]:
    return {
        "steps": HNAS_STEPS,
        "pool_size": pool_size,
        "input_shape": list(INPUT),
        "num_classes": 10,
        "build": dict(BUILD),
        "cache": cache,
    }


def run_nasi(seed: int) -> dict[str, Any]:
    space, table = NB201Space(), load_table()
    start = time.perf_counter()
    out = Nasi().fit(
        space,
        None,
        inputs="gaussian",
        input_shape=INPUT,
        num_classes=10,
        supernet=dict(BUILD),
        seed=seed,
        **NASI_OPTIONS,
    )
    seconds = time.perf_counter() - start
    index = space.index_of(out.best)
    return {
        "method": "nasi",
        "seed": seed,
        "arch": space.format(out.best),
        "accuracy": {d: table.accuracy_of(index, d) for d in DATASETS},
        "seconds": seconds,
        "nu0": out.produced_by["run"]["nu0"],
    }


def run_hnas(seed: int, dataset: str, cache: str, pool_size: int) -> dict[str, Any]:
    space = NB201Space()
    evaluator = NB201TableEvaluator(space, dataset=dataset)
    options = hnas_options(cache, pool_size)
    strategy = Hnas(space, objective=evaluator.objective, seed=seed, **options)
    spec = ExperimentSpec(
        space=space.name,
        strategy=Hnas.name,
        evaluator=evaluator.name,
        dataset=dataset,
        budget=Budget(trials=HNAS_STEPS),
        seed=seed,
        strategy_options=options,
    )
    start = time.perf_counter()
    out = Experiment(space, strategy, evaluator, spec, progress=False).run()
    wall = time.perf_counter() - start
    pool_seconds = float(strategy.pool.seconds.sum())  # measured when each cell was scored
    return {
        "method": "hnas",
        "seed": seed,
        "dataset": dataset,
        "pool_size": pool_size,
        "arch": space.format(out.best),
        "accuracy": out.best_result.objectives["test_accuracy"],
        "pool_seconds": pool_seconds,
        "bo_seconds": wall,  # the run's wall time: BO, lookups, and scoring not yet cached
        "simulated_seconds": sum(t.result.cost for t in out.history),
        "queries": len(out.history),
        "mu_nu": [[p.mu, p.nu] for p in strategy.proposals],
    }


def run_random(seed: int, dataset: str) -> dict[str, Any]:
    out = api.search("nb201", "random", "nb201-table", dataset=dataset, trials=HNAS_STEPS, seed=seed)
    return {
        "method": "random",
        "seed": seed,
        "dataset": dataset,
        "accuracy": out.best_result.objectives["test_accuracy"],
        "simulated_seconds": sum(t.result.cost for t in out.history),
        "queries": len(out.history),
    }


#: The packages whose code computes each method's numbers (their digest keys its records).
CODE = {
    "nasi": ("nasforge", "nasforge_nasi", "nasforge_nb201"),
    "hnas": ("nasforge", "nasforge_hnas", "nasforge_nb201"),
    "random": ("nasforge", "nasforge_search", "nasforge_nb201"),
}


def settings_of(method: str, seed: int, dataset: str | None = None, pool_size: int = 500) -> dict[str, Any]:
    """Everything a run's numbers depend on besides the code (the record's key)."""
    if method == "nasi":
        return {"method": method, "seed": seed, "input": list(INPUT), "build": BUILD, "options": NASI_OPTIONS}
    if method == "hnas":
        options = {k: v for k, v in hnas_options("", pool_size).items() if k != "cache"}
        return {"method": method, "seed": seed, "dataset": dataset, "options": options}
    return {"method": method, "seed": seed, "dataset": dataset, "queries": HNAS_STEPS}


def _stat(values: list[float]) -> str:
    if not values:
        return "-"
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


def report(records: list[dict[str, Any]], seeds: list[int], random_seeds: int = 0) -> None:
    rows: list[tuple[str, list[str], str]] = []
    for name, (*accs, cost) in PAPER.items():
        rows.append((name, [f"{m:.2f} ± {s:.2f}" for m, s in accs], cost))
    nasi = [r for r in records if r["method"] == "nasi" and r["seed"] in seeds]
    if nasi:
        secs = statistics.fmean(r["seconds"] for r in nasi)
        rows.append(
            (
                f"NASI (T=100), ours, {len(nasi)} seeds",
                [_stat([r["accuracy"][d] for r in nasi]) for d in DATASETS],
                f"{secs:.0f} CPU-s wall (1 thread)",
            )
        )
    means: dict[str, dict[str, float]] = {}
    hnas_pools = sorted({r.get("pool_size", 500) for r in records if r["method"] == "hnas"})
    groups = [("hnas", p) for p in hnas_pools] + [("random", None)]
    for method, pool in groups:
        cells, pool_s, bo_s, sim_s = [], [], [], []
        for d in DATASETS:
            rs = [
                r
                for r in records
                if r["method"] == method
                and r["dataset"] == d
                and r["seed"] in seeds
                and (pool is None or r.get("pool_size", 500) == pool)
            ]
            cells.append(_stat([r["accuracy"] for r in rs]))
            key = "random" if pool is None else f"HNAS (pool {pool})"
            means.setdefault(key, {})[d] = statistics.fmean(r["accuracy"] for r in rs) if rs else math.nan
            pool_s += [r.get("pool_seconds", 0.0) for r in rs]
            bo_s += [r.get("bo_seconds", 0.0) for r in rs]
            sim_s += [r["simulated_seconds"] for r in rs]
        if not sim_s:
            continue
        if method == "hnas":
            cost = (
                f"pool scoring {statistics.fmean(pool_s):.0f} CPU-s; run {statistics.fmean(bo_s):.0f} s wall;"
                f" {statistics.fmean(sim_s) / 3600:.1f} h simulated"
            )
            label = f"HNAS (M_Trace, K={HNAS_STEPS}, pool {pool}), ours"
        else:
            cost = f"{statistics.fmean(sim_s) / 3600:.1f} h simulated"
            label = f"random search ({HNAS_STEPS} queries), ours"
        rows.append((label, cells, cost))
    many = [r for r in records if r["method"] == "random" and r["seed"] < random_seeds]
    if random_seeds > len(seeds) and many:
        cells = [_stat([r["accuracy"] for r in many if r["dataset"] == d]) for d in DATASETS]
        n = len({r["seed"] for r in many})
        rows.append((f"random search ({HNAS_STEPS} queries), {n} seeds", cells, "its expectation"))
    width = max(len(r[0]) for r in rows)
    header = (
        f"{'method':<{width}} | {'CIFAR-10':>14} | {'CIFAR-100':>14} | {'ImageNet16-120':>14} | search time"
    )
    print(header)
    print("-" * len(header))
    for name, cells, cost in rows:
        print(f"{name:<{width}} | " + " | ".join(f"{c:>14}" for c in cells) + f" | {cost}")
    if many:
        means["random-many"] = {
            d: statistics.fmean(r["accuracy"] for r in many if r["dataset"] == d) for d in DATASETS
        }
    references = (("random", f"the same {len(seeds)} seeds"), ("random-many", "its many-seed expectation"))
    for (ref, label), name in itertools.product(references, [k for k in means if k.startswith("HNAS")]):
        pair = [means.get(m, {}) for m in (name, ref)]
        if not all(len(p) == len(DATASETS) and all(map(math.isfinite, p.values())) for p in pair):
            continue
        verdict = ", ".join(
            f"{d}: {'yes' if pair[0][d] > pair[1][d] else 'no'} ({pair[0][d]:.2f} vs {pair[1][d]:.2f})"
            for d in DATASETS
        )
        print(f"\n{name} beats random search ({HNAS_STEPS} table queries), {label}: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--methods", default="nasi,hnas,random")
    parser.add_argument(
        "--random-seeds", type=int, default=100, help="seeds of the extra random-search row (its expectation)"
    )
    parser.add_argument("--results", type=Path, default=Path("runs/nasi_hnas_nb201.jsonl"))
    parser.add_argument("--cache", default="runs/hnas-pool-cache-n5.jsonl")
    parser.add_argument("--pool-size", type=int, default=500, help="HNAS pool (random draws per seed)")
    parser.add_argument("--report-only", action="store_true", help="print the table from --results")
    parser.add_argument(
        "--recompute", action="store_true", help="ignore earlier records: run everything again"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    methods = set(args.methods.split(","))
    files = {m: RecordFile(args.results, code_version(*p), recompute=args.recompute) for m, p in CODE.items()}
    if not args.report_only:
        PoolCache(args.cache)  # fail early on an unreadable cache path
        for seed in seeds:
            if "nasi" in methods:
                run_and_record(files, settings_of("nasi", seed), run_nasi, seed)
            for d in DATASETS:
                if "hnas" in methods:
                    hnas = settings_of("hnas", seed, d, args.pool_size)
                    run_and_record(files, hnas, run_hnas, seed, d, args.cache, args.pool_size)
                if "random" in methods:
                    run_and_record(files, settings_of("random", seed, d), run_random, seed, d)
        for seed in range(args.random_seeds) if "random" in methods else ():
            for d in DATASETS:
                if seed not in seeds:
                    run_and_record(files, settings_of("random", seed, d), run_random, seed, d)
    report([r for f in files.values() for r in f.records()], seeds, args.random_seeds)


if __name__ == "__main__":
    main()

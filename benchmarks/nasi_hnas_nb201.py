"""NASI and HNAS on NAS-Bench-201 with the bundled table, data-agnostic, next to the papers.

Over 5 seeds, the test accuracy of NASI's derived cell and of HNAS's best cell (20 BO
steps) on CIFAR-10, CIFAR-100 and ImageNet16-120, with search cost, printed next to the
papers' numbers; HNAS against random search with the same number of table queries.

Settings (all stated, none tuned to a target; nothing is ever selected by test accuracy):

- Data-agnostic: every training-free number comes from N(0, I) inputs with uniform random
  labels; no dataset is read (CIFAR-10 is not on disk here; the papers used CIFAR batches).
- NASI: NASI-ADA with μ = 1 (NB201 is a small space by the paper's rule; the paper states
  no NB201 settings), T = 100, b = 64, all five ops, supernet C = 8, N = 5 cells per stage
  on 3x16x16 inputs (paper: C = 16, 32x32); one search per seed with 10 classes, its cell
  read on all three datasets (NASI never queries the table). One row per ν₀ rule
  (:data:`NASI_RULES`); eq. 40's calibration has a stream of its own, so at one seed every
  rule searches the same architectures on the same batches.
- HNAS at the authors' code's scale (:data:`HNAS_POOL`): M_Trace and κ on the code's
  kernel (true-class logit, per-layer shares of one train-mode batch backward,
  Conv/Linear parameters), a batch of 64, networks at C = 16, N = 5 on 3x32x32 inputs.
  One fixed pool for every seed (:data:`POOL`: 2,000 uniform draws with replacement of
  ``random.Random(0)``, as the code's sampler draws), scored once (``--prescore``, cached)
  and shared, so the seeds differ in the BO's own randomness only. Rows
  (:data:`HNAS_VARIANTS`): ``thesis`` (the thesis preset on that fixed pool instead of the
  code's growing one, which would need the whole space scored at this scale),
  ``defaults`` (the normalised (μ, ν) plane), and two variants with zero-cost synflow as M
  (κ still from the code's kernel): ``synflow`` on the thesis preset's plane (absolute,
  sized to M_Trace) and ``synflow-normalised`` on the normalised plane.
- HNAS and random search (the registered ``random`` strategy, the same 20 queries) follow
  the benchmark protocol as the thesis's code does: ONE CIFAR-10 search per seed, each
  query observing the 200-epoch CIFAR-10 validation accuracy; the chosen cell's test
  accuracy is reported on all three datasets.
- The pool's ranking quality is reported at this scale and at the earlier proxy's
  (:data:`SMALL_POOL`: C = 8, N = 1, 3x16x16, scored on the same cells with ``--sign``):
  Spearman of M_Trace and of -κ/M with CIFAR-10 validation accuracy.

Runs are appended to ``--results`` (JSON lines) and skipped when already there with the
same settings and the same code (``benchmarks/records.py``: a digest of the sources of
the packages that compute each method's numbers), so the methods can run in separate
invocations and a code change re-runs what it affects; ``--recompute`` ignores earlier
records. The table is printed from the file.

    python benchmarks/nasi_hnas_nb201.py --seeds 5 --prescore --sign
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from records import RecordFile, code_version, run_and_record

from nasforge import api
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import spearman
from nasforge_hnas import Hnas, HnasSettings, PoolCache, PoolScorer, PoolSettings, ScoredPool
from nasforge_hnas.pool import sample_genotypes
from nasforge_nasi import Nasi
from nasforge_nb201.evaluator import NB201TableEvaluator
from nasforge_nb201.space import NB201Space
from nasforge_nb201.table import load_table

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
NASI_INPUT = (3, 16, 16)
NASI_BUILD = {"C": 8, "N": 5}
NASI_BASE = {"steps": 100, "batch_size": 64, "mu": 1.0, "mode": "ada", "calibration_samples": 50}
#: One row per ν₀ rule (nasforge_nasi.config.NU0_RULES): eq. 40's mean; 5x it, our reading
#: of the paper's "relatively large" ν₀ (the rule of ``nu0="paper"`` in ADA mode); the
#: absolute 1000 the paper used on NAS-Bench-1Shot1 (this benchmark's earlier default).
NASI_RULES = ("eq40-mean", "eq40-relative", "nb1shot1-absolute")
HNAS_STEPS = 20
#: The authors' code's metric network and kernel, on Gaussian data: every HNAS row's pool.
HNAS_POOL = {
    "input_shape": [3, 32, 32],
    "num_classes": 10,
    "build": {"C": 16, "N": 5},
    "batch_size": 64,
    "kernel_output": "target",
    "kernel_bn": "decomposed",
    "kernel_params": "layers",
}
#: The proxy of the earlier HNAS rows (C = 8, N = 1, 16x16 inputs), where M_Trace ranked the other way round.
SMALL_POOL = {**HNAS_POOL, "input_shape": [3, 16, 16], "build": {"C": 8, "N": 1}}
#: The one fixed pool: ``size`` uniform draws with replacement from ``random.Random(seed)``.
POOL = {"pool_size": 2000, "pool_seed": 0}

PAPER = {
    "NASI (T), paper": ((93.08, 0.24), (69.51, 0.59), (40.87, 0.85), "30 GPU-s (1080Ti)"),
    "NASI (4T), paper": ((93.55, 0.10), (71.20, 0.14), (44.84, 1.41), "120 GPU-s (1080Ti)"),
    "HNAS (M_Trace), thesis Table 7.3": ((94.07, 0.10), (72.30, 0.70), (45.93, 0.37), "3006 GPU-s (1080Ti)"),
    "RS, NB201 paper": ((93.70, 0.36), (71.04, 1.07), (44.57, 1.25), "12000 s simulated"),
    "optimum": ((94.37, 0.0), (73.51, 0.0), (47.31, 0.0), "-"),
}

#: The HNAS rows: flat options besides the shared pool scoring (:data:`HNAS_POOL`, :data:`POOL`).
HNAS_VARIANTS: dict[str, dict[str, Any]] = {
    "thesis": {"preset": "thesis", "pool_growth": 0},
    "defaults": {},
    "synflow": {"preset": "thesis", "pool_growth": 0, "metric": "synflow"},
    "synflow-normalised": {"metric": "synflow"},
}
#: One search per seed observes this dataset's validation accuracy; its cell is reported
#: on all three datasets (test accuracy), as the thesis's code does.
SEARCH_DATASET = "cifar10"


def hnas_options(cache: str, variant: str) -> dict[str, Any]:
    return {"steps": HNAS_STEPS, **HNAS_POOL, **POOL, **HNAS_VARIANTS[variant], "cache": cache}


def pool_genotypes(space: NB201Space) -> list[Any]:
    """The fixed pool's distinct cells, in draw order (what every HNAS row's strategy draws)."""
    draws = sample_genotypes(space, POOL["pool_size"], random.Random(POOL["pool_seed"]))
    return list(dict.fromkeys(draws))


def run_nasi(seed: int, rule: str) -> dict[str, Any]:
    space, table = NB201Space(), load_table()
    start = time.perf_counter()
    out = Nasi().fit(
        space,
        None,
        inputs="gaussian",
        input_shape=NASI_INPUT,
        num_classes=10,
        supernet=dict(NASI_BUILD),
        seed=seed,
        nu0=rule,
        **NASI_BASE,
    )
    seconds = time.perf_counter() - start
    index = space.index_of(out.best)
    run = out.produced_by["run"]
    return {
        "method": "nasi",
        "rule": rule,
        "seed": seed,
        "arch": space.format(out.best),
        "accuracy": {d: table.accuracy_of(index, d) for d in DATASETS},
        "seconds": seconds,
        "calibration_seconds": run["calibration_seconds"],
        "nu0": run["nu0"],
        "nu0_rule": run["nu0_rule"],
        "sampled": [space.format(t.genotype) for t in out.history],
    }


def _on_all_datasets(space: NB201Space, g: Any) -> dict[str, float]:
    """The test accuracy of one cell on every dataset (the row's numbers)."""
    table, index = load_table(), space.index_of(g)
    return {d: table.accuracy_of(index, d) for d in DATASETS}


def run_hnas(seed: int, variant: str, cache: str) -> dict[str, Any]:
    space = NB201Space()
    evaluator = NB201TableEvaluator(space, dataset=SEARCH_DATASET)
    options = hnas_options(cache, variant)
    strategy = Hnas(space, objective=evaluator.objective, seed=seed, **options)
    spec = ExperimentSpec(
        space=space.name,
        strategy=Hnas.name,
        evaluator=evaluator.name,
        benchmark_dataset=SEARCH_DATASET,
        budget=Budget(trials=HNAS_STEPS),
        seed=seed,
        strategy_options=options,
    )
    start = time.perf_counter()
    out = Experiment(space, strategy, evaluator, spec, progress=False).run()
    wall = time.perf_counter() - start
    return {
        "method": "hnas",
        "variant": variant,
        "label": strategy.settings.label(),
        "seed": seed,
        "search_dataset": SEARCH_DATASET,
        "arch": space.format(out.best),
        "valid_accuracy": out.best_result.objectives["valid_accuracy"],
        "accuracy": _on_all_datasets(space, out.best),
        "pool_members": len(strategy.pool),
        "pool_seconds": float(strategy.pool.seconds.sum()),  # measured when each cell was scored
        "bo_seconds": wall,  # the run's wall time: BO, lookups, and scoring not yet cached
        "simulated_seconds": sum(t.result.cost for t in out.history),
        "queries": len(out.history),
        "mu_nu": [[p.mu, p.nu] for p in strategy.proposals],
    }


def run_random(seed: int) -> dict[str, Any]:
    out = api.search("nb201", "random", "nb201-table", dataset=SEARCH_DATASET, trials=HNAS_STEPS, seed=seed)
    return {
        "method": "random",
        "seed": seed,
        "search_dataset": SEARCH_DATASET,
        "valid_accuracy": out.best_result.objectives["valid_accuracy"],
        "accuracy": _on_all_datasets(NB201Space(), out.best),
        "simulated_seconds": sum(t.result.cost for t in out.history),
        "queries": len(out.history),
    }


def random_from_pool(seed: int) -> dict[str, float]:
    """20 distinct pool members drawn with ``random.Random(seed)``, the best valid one's test
    accuracy: random search confined to the pool HNAS ranks."""
    space, table = NB201Space(), load_table()
    pool = [space.index_of(g) for g in pool_genotypes(space)]
    picked = random.Random(seed).sample(pool, HNAS_STEPS)
    best = max(picked, key=lambda i: table.value("valid_accuracy", i, SEARCH_DATASET))
    return {d: table.accuracy_of(best, d) for d in DATASETS}


#: The packages whose code computes each method's numbers (their digest keys its records).
CODE = {
    "nasi": ("nasforge", "nasforge_nasi", "nasforge_nb201"),
    "hnas": ("nasforge", "nasforge_hnas", "nasforge_nb201", "nasforge_zerocost"),
    "random": ("nasforge", "nasforge_search", "nasforge_nb201"),
}


def settings_of(method: str, seed: int, variant: str | None = None) -> dict[str, Any]:
    """Everything a run's numbers depend on besides the code (the record's key)."""
    if method == "nasi":
        return {
            "method": method,
            "seed": seed,
            "input": list(NASI_INPUT),
            "build": NASI_BUILD,
            "options": {**NASI_BASE, "nu0": variant},
        }
    if method == "hnas":
        assert variant is not None
        options = {k: v for k, v in hnas_options("", variant).items() if k != "cache"}
        return {
            "method": method,
            "seed": seed,
            "search_dataset": SEARCH_DATASET,
            "variant": variant,
            "options": options,
        }
    return {"method": method, "seed": seed, "search_dataset": SEARCH_DATASET, "queries": HNAS_STEPS}


def _stat(values: list[float]) -> str:
    if not values:
        return "-"
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


def _cells(records: list[dict[str, Any]]) -> list[str]:
    return [_stat([r["accuracy"][d] for r in records]) for d in DATASETS]


def _means(records: list[dict[str, Any]]) -> dict[str, float]:
    return {d: statistics.fmean(r["accuracy"][d] for r in records) for d in DATASETS}


def report(records: list[dict[str, Any]], seeds: list[int], random_seeds: int, cache: str) -> None:
    rows: list[tuple[str, list[str], str]] = []
    for name, (*accs, cost) in PAPER.items():
        rows.append((name, [f"{m:.2f} ± {s:.2f}" for m, s in accs], cost))
    for rule in NASI_RULES:
        nasi = [r for r in records if r["method"] == "nasi" and r.get("rule") == rule and r["seed"] in seeds]
        if nasi:
            secs = statistics.fmean(r["seconds"] for r in nasi)
            nu0 = ", ".join(f"{r['nu0']:.0f}" for r in sorted(nasi, key=lambda r: r["seed"]))
            rows.append(
                (
                    f"NASI-ADA (T=100), nu0={rule}, ours, {len(nasi)} seeds",
                    _cells(nasi),
                    f"{secs:.0f} s wall (1 thread); nu0 per seed {nu0}",
                )
            )
    means: dict[str, dict[str, float]] = {}
    for variant in HNAS_VARIANTS:
        rs = [
            r for r in records if r["method"] == "hnas" and r.get("variant") == variant and r["seed"] in seeds
        ]
        if not rs:
            continue
        label = f"HNAS ({rs[0]['label']}), ours, {len(rs)} seeds"
        means[label] = _means(rs)
        cost = (
            f"pool scoring {statistics.fmean(r['pool_seconds'] for r in rs):.0f} s"
            f" ({statistics.fmean(r['pool_members'] for r in rs):.0f} cells, shared);"
            f" run {statistics.fmean(r['bo_seconds'] for r in rs):.0f} s wall;"
            f" {statistics.fmean(r['simulated_seconds'] for r in rs) / 3600:.1f} h simulated"
        )
        rows.append((label, _cells(rs), cost))
    protocol = [r for r in records if r["method"] == "random" and r.get("search_dataset") == SEARCH_DATASET]
    same = [r for r in protocol if r["seed"] in seeds]
    if same:
        means["random"] = _means(same)
        sim = statistics.fmean(r["simulated_seconds"] for r in same) / 3600
        rows.append(
            (
                f"random search ({HNAS_STEPS} queries), same {len(same)} seeds",
                _cells(same),
                f"{sim:.1f} h simulated",
            )
        )
    many = [r for r in protocol if r["seed"] < random_seeds]
    if random_seeds > len(seeds) and many:
        means["random-many"] = _means(many)
        rows.append(
            (f"random search ({HNAS_STEPS} queries), {len(many)} seeds", _cells(many), "its expectation")
        )
    in_pool = [{"accuracy": random_from_pool(s)} for s in range(max(random_seeds, len(seeds)))]
    means["random-pool"] = _means(in_pool)
    rows.append(
        (
            f"random {HNAS_STEPS} of the HNAS pool, {len(in_pool)} seeds",
            _cells(in_pool),
            "its expectation",
        )
    )
    space, table = NB201Space(), load_table()
    pool = [space.index_of(g) for g in pool_genotypes(space)]
    best = max(pool, key=lambda i: table.value("valid_accuracy", i, SEARCH_DATASET))
    oracle = [f"{table.accuracy_of(best, d):.2f}" for d in DATASETS]
    rows.append((f"best valid of the HNAS pool ({len(pool)} cells)", oracle, f"{len(pool)} queries"))
    width = max(len(r[0]) for r in rows)
    header = (
        f"{'method':<{width}} | {'CIFAR-10':>14} | {'CIFAR-100':>14} | {'ImageNet16-120':>14} | search cost"
    )
    print(f"(HNAS and random search: one {SEARCH_DATASET} search per seed observing validation accuracy;")
    print(" its cell's 200-epoch test accuracy on each dataset)")
    print(header)
    print("-" * len(header))
    for name, cells, cost in rows:
        print(f"{name:<{width}} | " + " | ".join(f"{c:>14}" for c in cells) + f" | {cost}")
    references = (
        ("random", f"the same {len(seeds)} seeds"),
        ("random-many", "its many-seed expectation"),
        ("random-pool", "random picks from the same pool"),
    )
    for (ref, label), name in itertools.product(references, [k for k in means if k.startswith("HNAS")]):
        if ref not in means:
            continue
        pair = (means[name], means[ref])
        verdict = ", ".join(
            f"{d}: {'yes' if pair[0][d] > pair[1][d] else 'no'} ({pair[0][d]:.2f} vs {pair[1][d]:.2f})"
            for d in DATASETS
        )
        print(f"\n{name} beats random search ({HNAS_STEPS} table queries), {label}: {verdict}")
    same_streams = {}
    for seed in seeds:
        by_rule = {
            r["rule"]: r["sampled"]
            for r in records
            if r["method"] == "nasi" and r["seed"] == seed and r.get("rule") in NASI_RULES
        }
        if len(by_rule) > 1:
            same_streams[seed] = len({tuple(v) for v in by_rule.values()}) == 1
    if same_streams:
        print(f"\nNASI rules sampled identical architecture streams per seed: {same_streams}")
    ranking(cache)


def ranking(cache: str) -> None:
    """Spearman of M_Trace and of -κ/M with CIFAR-10 validation accuracy over the pool, at
    the code's scale and at the earlier proxy's (where both are cached)."""
    space, table = NB201Space(), load_table()
    genotypes = pool_genotypes(space)
    valid = [table.value("valid_accuracy", space.index_of(g), SEARCH_DATASET) for g in genotypes]
    store = PoolCache(cache)
    for name, scale in (
        ("code scale (C=16, N=5, 32x32)", HNAS_POOL),
        ("proxy (C=8, N=1, 16x16)", SMALL_POOL),
    ):
        scorer = PoolScorer(space, PoolSettings(**_pool_fields(scale)), store)
        hits = [store.get(scorer.key, space.format(g)) for g in genotypes]
        rows = [(h, v) for h, v in zip(hits, valid, strict=True) if h is not None]
        rows = [
            (h, v) for h, v in rows if math.isfinite(h.metric) and math.isfinite(h.kappa) and h.metric > 0
        ]
        if len(rows) < 3:
            continue
        acc = [v for _, v in rows]
        m = spearman([h.metric for h, _ in rows], acc)
        k = spearman([-h.kappa / h.metric for h, _ in rows], acc)
        secs = statistics.fmean(h.seconds for h, _ in rows)
        print(
            f"{name}: {len(rows)} of {len(genotypes)} cells, Spearman with CIFAR-10 valid: "
            f"M_Trace {m:+.3f}, -kappa/M {k:+.3f}; {secs:.2f} s/cell"
        )


def _pool_fields(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "input_shape": tuple(options["input_shape"]),
        "num_classes": options["num_classes"],
        "build": options["build"],
        "batch_size": options["batch_size"],
        "kernel_output": options["kernel_output"],
        "kernel_bn": options["kernel_bn"],
        "kernel_params": options["kernel_params"],
    }


def prescore(cache: str, *, small: bool) -> None:
    """Score the fixed pool into ``cache``, once, in this one process: M_Trace and κ at the
    code's scale (the thesis and defaults rows), synflow (κ reused from those), then, with
    ``small``, M_Trace at the earlier proxy (the ranking comparison only)."""
    space = NB201Space()
    genotypes = pool_genotypes(space)
    store = PoolCache(cache)
    thesis, synflow = (HnasSettings.from_options(hnas_options(cache, v)).pool for v in ("thesis", "synflow"))
    assert thesis == HnasSettings.from_options(hnas_options(cache, "defaults")).pool, "rows share one pool"
    jobs = [("m_trace", thesis), ("synflow", synflow)]
    if small:
        jobs.append(("m_trace, proxy", PoolSettings(**_pool_fields(SMALL_POOL))))
    for name, settings in jobs:
        scorer = PoolScorer(space, settings, store)
        start = time.perf_counter()
        pool = ScoredPool()
        scorer.fill(pool, genotypes, progress=_progress(name, start))
        wall = time.perf_counter() - start
        print(
            f"{name}: key {scorer.key}, {len(pool)} cells, {float(pool.seconds.sum()):.0f} s scoring "
            f"(summed per cell, when each was scored), {wall:.0f} s wall now",
            flush=True,
        )


def _progress(name: str, start: float) -> Any:
    def report(done: int, total: int) -> None:
        if done % 200 == 0 or done == total:
            print(f"{name}: {done}/{total} cells, {time.perf_counter() - start:.0f} s wall", flush=True)

    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--methods", default="nasi,hnas,random")
    parser.add_argument(
        "--random-seeds", type=int, default=100, help="seeds of the extra random-search row (its expectation)"
    )
    parser.add_argument("--results", type=Path, default=Path("runs/nasi_hnas_nb201.jsonl"))
    parser.add_argument("--cache", default="runs/hnas-pool-code-scale.jsonl")
    parser.add_argument(
        "--variants", default=",".join(HNAS_VARIANTS), help=f"HNAS rows to run, of {', '.join(HNAS_VARIANTS)}"
    )
    parser.add_argument("--rules", default=",".join(NASI_RULES), help="NASI nu0 rules to run")
    parser.add_argument("--report-only", action="store_true", help="print the table from --results")
    parser.add_argument(
        "--prescore", action="store_true", help="score the fixed HNAS pool into --cache first (one process)"
    )
    parser.add_argument(
        "--sign", action="store_true", help="with --prescore: also score the pool at the earlier proxy"
    )
    parser.add_argument(
        "--recompute", action="store_true", help="ignore earlier records: run everything again"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    methods = set(args.methods.split(","))
    variants = [v for v in args.variants.split(",") if v]
    rules = [r for r in args.rules.split(",") if r]
    unknown = sorted(set(variants) - set(HNAS_VARIANTS)) + sorted(set(rules) - set(NASI_RULES))
    if unknown:
        parser.error(f"unknown HNAS variant(s) or NASI rule(s) {unknown}")
    files = {m: RecordFile(args.results, code_version(*p), recompute=args.recompute) for m, p in CODE.items()}
    if args.prescore:
        prescore(args.cache, small=args.sign)
    if not args.report_only:
        PoolCache(args.cache)  # fail early on an unreadable cache path
        for seed in seeds:
            for rule in rules if "nasi" in methods else ():
                run_and_record(files, settings_of("nasi", seed, rule), run_nasi, seed, rule)
            for variant in variants if "hnas" in methods else ():
                hnas = settings_of("hnas", seed, variant)
                run_and_record(files, hnas, run_hnas, seed, variant, args.cache)
            if "random" in methods:
                run_and_record(files, settings_of("random", seed), run_random, seed)
        for seed in range(args.random_seeds) if "random" in methods else ():
            if seed not in seeds:
                run_and_record(files, settings_of("random", seed), run_random, seed)
    report([r for f in files.values() for r in f.records()], seeds, args.random_seeds, args.cache)


if __name__ == "__main__":
    main()

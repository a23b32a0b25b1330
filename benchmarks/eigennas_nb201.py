"""Eigen-NAS on NAS-Bench-201 under the benchmark protocol, data-agnostic, next to the paper's Table 2.

Issue 12's "must show": over 5 seeds and CIFAR-10, CIFAR-100 and ImageNet16-120, the test
accuracy of the cell Eigen-NAS chooses (the best *validation* accuracy among the top-k of
its trace ranking; the bundled table's 200-epoch numbers), for k = 20 and k = 5, beside
the paper's Table 2, beside KNAS (the registered ``knas`` metric, the KNAS paper's MGM, in
the very same pipeline) and beside random selection of k cells with the same k
validation look-ups (the registered ``random`` strategy).

Settings (all stated, none tuned to a target):
- Data-agnostic: N = 50 samples of N(0, I) inputs (3x16x16) with uniform random labels,
  each forwarded alone in train mode (the KNAS pipeline the paper follows); no dataset read.
- Proxy networks: the benchmark's depth (N = 5 cells per stage) at width C = 8 and 16x16
  inputs, so a CPU can afford them (paper: C = 16, 32x32); the same choice as
  ``nasi_hnas_nb201.py``, where N = 1 made a gradient proxy barely track accuracy.
- Pool: ``--sample`` distinct uniform cells per seed (paper: the whole space on a GPU),
  drawn from the strategy's own seeded rng, so k = 20 and k = 5, Eigen-NAS and KNAS all
  rank one pool per seed, scored once (the two metrics share one Jacobian) and cached on
  disk (``--cache``, keyed by metric version, batch hash, build options, seeds and
  nasforge version). Every network is initialised from the run's seed.
- Heads: ``--classes 10`` (default) scores one 10-class network per cell and seed for
  all three datasets, as NASI's row of ``nasi_hnas_nb201.py`` does; ``--classes
  per-dataset`` builds 10/100/120-class heads, three times the scoring.
- Each Eigen-NAS or KNAS run is a ``nasforge`` Experiment with the ``nb201-table``
  evaluator: k trials, validation accuracy observed, the chosen cell's test accuracy reported.

Runs are appended to ``--results`` (JSON lines) and skipped when already there with the
same settings and the same code (``benchmarks/records.py``: a digest of the sources of the
packages that compute the numbers), so a kill loses one run and a code change re-runs what
it affects (cheaply: the scores stay in ``--cache``); ``--recompute`` ignores earlier
records. The table is printed from the file.

    python benchmarks/eigennas_nb201.py --seeds 5 --sample 1000
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
from nasforge.kernel.registry import get_registry
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import kendall
from nasforge_eigennas import EigenNas, ScoreSettings, draw_candidates, score_candidates
from nasforge_nb201.space import NB201Space
from nasforge_nb201.table import load_table, protocol_optimum

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
CLASSES = {"cifar10": 10, "cifar100": 100, "imagenet16-120": 120}
INPUT = (3, 16, 16)
BUILD = {"C": 8, "N": 5}
BATCH = 50
KS = (20, 5)
METRICS = {"Eigen-NAS": "eigennas_trace", "KNAS": "knas"}

PAPER_SOURCE = "seed 000 (Zhu et al., NeurIPS 2022) Table 2, test accuracy, 5 repeats"
PAPER: dict[str, tuple[tuple[float, float | None], ...]] = {
    "Eigen-NAS (k=20), paper": ((93.46, 0.01), (71.42, 0.63), (45.54, 0.04)),
    "Eigen-NAS (k=5), paper": ((93.43, 0.08), (69.92, 1.82), (45.53, 0.06)),
    "KNAS (k=20), as quoted by the paper": ((93.38, None), (70.78, None), (44.63, None)),
}


def strategy_options(sample: int, k: int, metric: str, classes: int, cache: str) -> dict[str, Any]:
    return {
        "sample_size": sample,
        "top_k": k,
        "metric": metric,
        "batch_size": BATCH,
        "input_shape": list(INPUT),
        "num_classes": classes,
        "build": dict(BUILD),
        "cache": cache,
    }


def heads(dataset: str, mode: str) -> int:
    return CLASSES[dataset] if mode == "per-dataset" else 10


def prescore(seed: int, sample: int, classes: int, cache: str) -> dict[str, Any]:
    """Score the seed's pool under both metrics at once (one Jacobian each cell), into the cache."""
    space = NB201Space()
    pool = draw_candidates(space, sample, random.Random(seed))  # what EigenNas(seed=seed) draws
    settings = ScoreSettings(
        metric=METRICS["Eigen-NAS"],
        batch_size=BATCH,
        input_shape=INPUT,
        num_classes=classes,
        build=dict(BUILD),
        init_seed=seed,
    )
    start = time.perf_counter()
    table = score_candidates(space, pool, settings, metrics=[METRICS["KNAS"]], cache=cache)
    wall = time.perf_counter() - start
    computed = sum(
        float(r[METRICS["Eigen-NAS"]].seconds) + float(r[METRICS["KNAS"]].seconds) for r in table.rows
    )
    index = [space.index_of(g) for g in pool]
    scores = {name: [float(r[label].value) for r in table.rows] for name, label in METRICS.items()}
    t = load_table()
    tau = {
        d: {name: kendall(v, [t.value("valid_accuracy", i, d) for i in index]) for name, v in scores.items()}
        for d in DATASETS
    }
    oracle = {}
    for d in DATASETS:
        best = max(index, key=lambda i, d=d: t.value("valid_accuracy", i, d))
        oracle[d] = t.value("test_accuracy", best, d)
    return {
        "method": "pool",
        "seed": seed,
        "sample": sample,
        "classes": classes,
        "pool": len(pool),
        "score_seconds": computed,  # when each score was computed (a cached pool keeps its first cost)
        "wall_seconds": wall,
        "tau_valid": tau,
        "oracle_test": oracle,
    }


def run_ranked(name: str, seed: int, dataset: str, k: int, sample: int, classes: int, cache: str) -> dict:
    registry = get_registry()
    space = NB201Space()
    evaluator = registry.get("evaluator", "nb201-table")(space, dataset=dataset)
    options = strategy_options(sample, k, METRICS[name], classes, cache)
    strategy = EigenNas(space, objective=evaluator.objective, seed=seed, registry=registry, **options)
    spec = ExperimentSpec(
        space=space.name,
        strategy=EigenNas.name,
        evaluator=evaluator.name,
        dataset=dataset,
        budget=Budget(trials=k),
        seed=seed,
        strategy_options=options,
    )
    start = time.perf_counter()
    out = Experiment(space, strategy, evaluator, spec, progress=False, registry=registry).run()
    return {
        "method": name,
        "seed": seed,
        "dataset": dataset,
        "k": k,
        "sample": sample,
        "classes": classes,
        "arch": space.format(out.best),
        "accuracy": out.best_result.objectives["test_accuracy"],
        "valid": out.best_result.objectives["valid_accuracy"],
        "queries": len(out.history),
        "score_seconds": sum(r.seconds for r in strategy.ranked or ()),
        "run_seconds": time.perf_counter() - start,
    }


def run_random(seed: int, dataset: str, k: int) -> dict[str, Any]:
    out = api.search("nb201", "random", "nb201-table", dataset=dataset, trials=k, seed=seed)
    return {
        "method": "random",
        "seed": seed,
        "dataset": dataset,
        "k": k,
        "accuracy": out.best_result.objectives["test_accuracy"],
        "queries": len(out.history),
    }


#: The packages whose code computes each kind of record (their digest keys the records).
SCORED = ("nasforge", "nasforge_eigennas", "nasforge_nb201", "nasforge_zerocost")
CODE = {
    "pool": SCORED,
    "Eigen-NAS": SCORED,
    "KNAS": SCORED,
    "random": ("nasforge", "nasforge_search", "nasforge_nb201"),
}


def settings_of(method: str, seed: int, **fields: Any) -> dict[str, Any]:
    """Everything a record's numbers depend on besides the code (its key)."""
    base = {"method": method, "seed": seed, **fields}
    if method != "random":
        base.update(input=list(INPUT), build=BUILD, batch=BATCH)
    return base


def _stat(values: list[float]) -> str:
    if not values:
        return "-"
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


def _paper(value: tuple[float, float | None]) -> str:
    mean, sd = value
    return f"{mean:.2f}" if sd is None else f"{mean:.2f} ± {sd:.2f}"


def report(
    records: list[dict[str, Any]], seeds: list[int], sample: int, mode: str, random_seeds: int
) -> None:
    def pick(method: str, d: str, k: int | None = None, seed_set: list[int] | None = None) -> list[dict]:
        chosen = seeds if seed_set is None else seed_set
        return [
            r
            for r in records
            if r["method"] == method
            and r.get("dataset") == d
            and (k is None or r.get("k") == k)
            and r["seed"] in chosen
            and (method == "random" or (r.get("sample") == sample and r.get("classes") == heads(d, mode)))
        ]

    rows: list[tuple[str, list[str], str]] = [
        (n, [_paper(v) for v in vals], "paper") for n, vals in PAPER.items()
    ]
    classes = {heads(d, mode) for d in DATASETS}
    pools = [
        r
        for r in records
        if r["method"] == "pool" and r["seed"] in seeds and r["sample"] == sample and r["classes"] in classes
    ]
    score_s = statistics.fmean(r["score_seconds"] / r["pool"] for r in pools) if pools else math.nan
    per_run = statistics.fmean(r["score_seconds"] for r in pools) if pools else math.nan
    for k in KS:
        for name in METRICS:
            cells = [_stat([r["accuracy"] for r in pick(name, d, k)]) for d in DATASETS]
            n = len({r["seed"] for d in DATASETS for r in pick(name, d, k)})
            cost = f"{per_run:.0f} CPU-s scoring/seed (both scores), {k} look-ups"
            rows.append((f"{name} (k={k}), ours, {n} seeds", cells, cost))
        cells = [_stat([r["accuracy"] for r in pick("random", d, k)]) for d in DATASETS]
        rows.append((f"random k={k} cells, best valid, same seeds", cells, f"{k} table look-ups"))
        many = list(range(random_seeds))
        cells = [_stat([r["accuracy"] for r in pick("random", d, k, many)]) for d in DATASETS]
        rows.append((f"random k={k} cells, {random_seeds} seeds", cells, "its expectation"))
    oracle = [_stat([r["oracle_test"][d] for r in pools if r["classes"] == heads(d, mode)]) for d in DATASETS]
    rows.append((f"best valid of the whole pool ({sample} cells)", oracle, f"k = {sample} look-ups"))
    best = [protocol_optimum(d) for d in DATASETS]
    rows.append(("best valid of all 15,625 cells", [f"{b[2]:.2f}" for b in best], "the table"))

    width = max(len(r[0]) for r in rows)
    header = f"{'method':<{width}} | {'CIFAR-10':>14} | {'CIFAR-100':>14} | {'ImageNet16-120':>14} | cost"
    print(f"\nNAS-Bench-201, test accuracy of the chosen cell (mean ± std over seeds); paper: {PAPER_SOURCE}")
    print(
        f"settings: pool {sample} uniform cells/seed; proxy C={BUILD['C']}, N={BUILD['N']} cells/stage, "
        f"{INPUT[1]}x{INPUT[2]} Gaussian inputs, {BATCH} samples; heads: {mode}; "
        f"{score_s * 1000:.0f} ms/cell for both scores (1 CPU thread)"
    )
    print(header)
    print("-" * len(header))
    for name, cells, cost in rows:
        print(f"{name:<{width}} | " + " | ".join(f"{c:>14}" for c in cells) + f" | {cost}")
    if pools:
        print("\nKendall τ of the score against validation accuracy over each pool (mean over seeds):")
        for d in DATASETS:
            own = [r for r in pools if r["classes"] == heads(d, mode)]
            taus = {n: statistics.fmean(r["tau_valid"][d][n] for r in own) for n in METRICS}
            print(f"  {d:>15}: " + ", ".join(f"{n} {v:.3f}" for n, v in taus.items()))
        same = []
        for d in DATASETS:
            for k in KS:
                a = {r["seed"]: r["arch"] for r in pick("Eigen-NAS", d, k)}
                b = {r["seed"]: r["arch"] for r in pick("KNAS", d, k)}
                same += [a[s] == b[s] for s in a if s in b]
        if same:
            print(f"Eigen-NAS and KNAS chose the same cell in {sum(same)}/{len(same)} runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sample", type=int, default=1000, help="cells scored per seed")
    parser.add_argument("--classes", choices=("10", "per-dataset"), default="10")
    parser.add_argument("--random-seeds", type=int, default=100, help="seeds of the random expectation row")
    parser.add_argument("--results", type=Path, default=Path("runs/eigennas_nb201.jsonl"))
    parser.add_argument("--cache", default="runs/eigennas-scores")
    parser.add_argument("--report-only", action="store_true", help="print the table from --results")
    parser.add_argument(
        "--recompute", action="store_true", help="ignore earlier records: run everything again"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    files = {m: RecordFile(args.results, code_version(*p), recompute=args.recompute) for m, p in CODE.items()}
    if not args.report_only:
        n = args.sample
        for seed in seeds:
            for c in sorted({heads(d, args.classes) for d in DATASETS}):
                pool = settings_of("pool", seed, sample=n, classes=c)
                run_and_record(files, pool, prescore, seed, n, c, args.cache)
            for d, k, name in itertools.product(DATASETS, KS, METRICS):
                c = heads(d, args.classes)
                ranked = settings_of(name, seed, dataset=d, k=k, sample=n, classes=c)
                run_and_record(files, ranked, run_ranked, name, seed, d, k, n, c, args.cache)
        for seed, d, k in itertools.product(range(max(args.random_seeds, args.seeds)), DATASETS, KS):
            run_and_record(files, settings_of("random", seed, dataset=d, k=k), run_random, seed, d, k)
    records = list({r["key"]: r for f in files.values() for r in f.records()}.values())
    report(records, seeds, args.sample, args.classes, args.random_seeds)


if __name__ == "__main__":
    main()

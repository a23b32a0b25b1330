"""Pre-ranking on NAS-Bench-201: training-free ranking of all 15,625 cells, at most 10 queries.

``prerank`` ranks every cell by synflow (data-free; networks as ``nasforge score`` builds
them: C=16, N=5, 10 classes, 3x32x32 input, one initialisation seed), validates the top
10 on the bundled table under the benchmark protocol (validation accuracy observed, the
chosen cell's test accuracy reported) and stops. One ranking serves all three datasets,
since no label or image of theirs enters synflow. Printed, per metric-initialisation seed
(``--init-seeds``, 5 by default) and dataset: the chosen cell's test accuracy and its
mean over the seeds, against the targets (94.30 / 73.30 / 46.30) and the published
training-free and hybrid results (reference figures from the papers, another protocol:
most train or score on their own data and report their own search's choice).

``--averaged`` adds the ranking by the mean rank over all the seeds (one search).

``--warm`` adds regularized evolution warm-started by the same top 10 (``prerank -o
then=rea``) against plain REA, 10 seeds on CIFAR-10, at 20, 50, 100 and 200 queries.

``--timing`` measures the scoring's wall time with the CLI a user would type: cold (an
empty cache directory) ``nasforge search --strategy prerank ... --executor process
--workers 2``, and warm after ``nasforge correlate --space nb201 --all -m synflow`` filled
the cache, each end to end (Python start-up included) and as the ranking's own seconds,
with the load average before and after (a timing on a busy machine says so).

Scores go to the shared score cache (``--cache DIR`` for another); results to
``runs/prerank-nb201.jsonl``, keyed by settings and code.

    python benchmarks/prerank_nb201.py [--averaged] [--warm] [--timing]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nasforge import api
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.registry import get_registry
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import default_cache_dir
from nasforge_nb201.table import load_table, protocol_optimum
from nasforge_search import PreRank

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import RecordFile, code_version  # noqa: E402

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
TARGETS = {"cifar10": 94.30, "cifar100": 73.30, "imagenet16-120": 46.30}
#: Published CIFAR-10 test accuracy of training-free and hybrid searches on NAS-Bench-201
#: (each paper's own figure, under its own protocol).
PUBLISHED = {"NASI": 93.55, "Eigen-NAS": 93.46, "TE-NAS": 93.9, "HNAS": 94.07, "RoBoT (hybrid)": 94.36}
WARM_SEEDS, WARM_BUDGETS = 10, (20, 50, 100, 200)


def prerank_run(dataset: str, options: dict[str, Any], cache: str, parallelism: Parallelism | None) -> dict:
    """One pre-ranking search on ``dataset``: the chosen cell, the top k, the ranking's cost."""
    registry = get_registry()
    spec = ExperimentSpec(
        space="nb201",
        strategy="prerank",
        evaluator="nb201-table",
        budget=Budget(trials=10),
        benchmark_dataset=dataset,
        strategy_options={**options, "cache": cache},
    )
    space = spec.build_space(registry)
    evaluator = spec.build_evaluator(registry, space)
    strategy = PreRank(
        space, objective=evaluator.objective, seed=0, parallelism=parallelism, **{**options, "cache": cache}
    )
    outcome = Experiment(space, strategy, evaluator, spec, progress=False).run()
    chosen = outcome.best_result
    assert chosen is not None and strategy.ranking is not None
    return {
        "test": chosen.objectives["test_accuracy"],
        "valid": chosen.objectives["valid_accuracy"],
        "queries": len(outcome.history),
        "chosen": space.format(outcome.best),
        "top_test": [t.result.objectives["test_accuracy"] for t in outcome.history],
        "ranking_seconds": strategy.ranking.seconds,
        "scores_computed": strategy.ranking.computed,
    }


def training_free(args: argparse.Namespace, records: RecordFile) -> None:
    print(
        "Training-free ranking (synflow over all 15,625 cells) + the top 10 validated, under the protocol\n"
    )
    rows: list[tuple[str, list[int]]] = [(f"init seed {s}", [s]) for s in args.init_seeds]
    if args.averaged:
        rows.append((f"seeds {args.init_seeds} averaged", list(args.init_seeds)))
    where = Parallelism("process", args.workers) if args.workers > 1 else None
    results: dict[tuple[str, str], dict] = {}
    for label, seeds in rows:
        for dataset in DATASETS:
            options = {"metric": "synflow", "top_k": 10, "init_seeds": seeds}
            settings = {"dataset": dataset, "options": options}
            found = records.records([settings])
            if not found:
                found = [records.append(settings, prerank_run(dataset, options, args.cache, where))]
            results[label, dataset] = found[0]
    print(
        f"{'ranking':28s} " + " ".join(f"{d:>16s}" for d in DATASETS) + f" {'queries':>8s} {'scored in':>10s}"
    )
    for label, _ in rows:
        cells = [f"{results[label, d]['test']:6.2f} (v {results[label, d]['valid']:5.2f})" for d in DATASETS]
        first = results[label, DATASETS[0]]
        print(
            f"{label:28s} " + " ".join(f"{c:>16s}" for c in cells) + f" {first['queries']:8d} "
            f"{first['ranking_seconds']:9.1f}s"
        )
    single = [label for label, seeds in rows if len(seeds) == 1]
    means = {d: statistics.fmean(results[label, d]["test"] for label in single) for d in DATASETS}
    spread = {d: statistics.pstdev([results[label, d]["test"] for label in single]) for d in DATASETS}
    print(
        f"{f'mean over {len(single)} init seeds':28s} "
        + " ".join(f"{f'{means[d]:.2f} ± {spread[d]:.2f}':>16s}" for d in DATASETS)
    )
    verdict = " ".join(
        f"{d} {means[d]:.2f} {'>=' if means[d] >= TARGETS[d] else '<'} {TARGETS[d]:.2f}" for d in DATASETS
    )
    print(f"target (mean test accuracy): {verdict}")
    table = load_table()
    for d in DATASETS:
        _, valid, test = protocol_optimum(d)
        print(
            f"  {d}: table's best-validation cell has test {test:.2f}; test optimum "
            f"{table.optimum(d, 'test_accuracy')[1]:.2f}"
        )
    print(
        "published CIFAR-10 (reference figures, their protocols): "
        + ", ".join(f"{k} {v:.2f}" for k, v in PUBLISHED.items())
    )


def warm_start(args: argparse.Namespace, records: RecordFile) -> None:
    print(
        f"\nWarm start: REA after the top 10 by synflow (init seed 0), vs REA, CIFAR-10, {WARM_SEEDS} seeds"
    )
    rows = {"rea": ("rea", {}), "prerank>rea": ("prerank", {"top_k": 10, "then": "rea", "cache": args.cache})}
    for name, (strategy, options) in rows.items():
        at: dict[int, list[float]] = {b: [] for b in WARM_BUDGETS}
        for seed in range(WARM_SEEDS):
            settings = {"warm": name, "seed": seed, "trials": max(WARM_BUDGETS)}
            found = records.records([settings])
            if not found:
                out = api.search(
                    "nb201",
                    strategy,
                    "nb201-table",
                    benchmark_dataset="cifar10",
                    trials=max(WARM_BUDGETS),
                    seed=seed,
                    strategy_options=options,
                )
                found = [records.append(settings, {"incumbent_test": _incumbent_tests(out)})]
            for b in WARM_BUDGETS:
                at[b].append(found[0]["incumbent_test"][b - 1])
        cells = " ".join(
            f"{f'{statistics.fmean(v):.2f}±{statistics.pstdev(v):.2f}':>12s}" for v in at.values()
        )
        print(f"{name:12s} {cells}   (at {', '.join(map(str, WARM_BUDGETS))} queries)")


def _incumbent_tests(outcome: Any) -> list[float]:
    out, best_valid, best_test = [], float("-inf"), float("nan")
    for t in outcome.history:
        if t.result.objectives["valid_accuracy"] > best_valid:
            best_valid, best_test = (
                t.result.objectives["valid_accuracy"],
                t.result.objectives["test_accuracy"],
            )
        out.append(best_test)
    return out


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - started, proc.stdout


def timing(args: argparse.Namespace) -> None:
    """Cold and warm scoring through the CLI, in a fresh cache directory."""
    print("\nScoring's wall time through the CLI (2 cores: --executor process --workers 2)")
    cache = Path(tempfile.mkdtemp(prefix="prerank-timing-"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    search = [
        sys.executable,
        "-m",
        "nasforge",
        "search",
        "--space",
        "nb201",
        "--strategy",
        "prerank",
        "-o",
        f"cache={cache}",
        "-o",
        "top_k=10",
        "--evaluator",
        "nb201-table",
        "--dataset",
        "cifar10",
        "--budget-trials",
        "10",
        "--json",
        "-q",
    ]
    try:
        load = os.getloadavg()
        cold, out = _timed([*search, "--executor", "process", "--workers", "2"], env)
        after, chosen = os.getloadavg()[0], json.loads(out)["reported_value"]
        print(f"cold: {cold:.1f} s end to end (load {load[0]:.2f} -> {after:.2f}); chose test {chosen:.2f}")
        shutil.rmtree(cache)
        cache.mkdir()
        correlate = [
            sys.executable,
            "-m",
            "nasforge",
            "correlate",
            "--space",
            "nb201",
            "--all",
            "-m",
            "synflow",
            "--executor",
            "process",
            "--workers",
            "2",
            "--cache",
            str(cache),
            "--json",
            "-q",
        ]
        filled, _ = _timed(correlate, env)
        load = os.getloadavg()
        warm, out = _timed(search, env)
        after, chosen = os.getloadavg()[0], json.loads(out)["reported_value"]
        print(f"correlate --all filled the cache in {filled:.1f} s; then the search, warm: {warm:.1f} s")
        print(f"  end to end (load average {load[0]:.2f} -> {after:.2f}); chose test {chosen:.2f}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--init-seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--averaged", action="store_true")
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--workers", type=int, default=2, help="processes scoring an uncached ranking")
    parser.add_argument("--cache", default=str(default_cache_dir()))
    parser.add_argument("--records", type=Path, default=Path("runs/prerank-nb201.jsonl"))
    parser.add_argument("--recompute", action="store_true")
    args = parser.parse_args()
    if not args.init_seeds or min(args.init_seeds) < 0 or args.workers < 1:
        parser.error("--init-seeds needs seeds >= 0, --workers at least 1")
    code = code_version("nasforge", "nasforge_search", "nasforge_nb201", "nasforge_zerocost")
    records = RecordFile(args.records, code, recompute=args.recompute)
    started = time.perf_counter()
    training_free(args, records)
    if args.warm:
        warm_start(args, records)
    if args.timing:
        timing(args)
    print(f"\nwall time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

"""REA against random search on the bundled NAS-Bench-201 table, same budget, many seeds.

Prints the mean and standard deviation of the best test accuracy found within the trial
budget, for each strategy and dataset, next to the targets from the issue and the
literature (NAS-Bench-201 paper: REA ~93.92, RS ~93.70 on CIFAR-10 with the 12-epoch
validation proxy; here the fitness is the 200-epoch test accuracy itself, since the
bundled table has no validation column). Optionally writes anytime curves (best so far
against simulated hours) as a PNG.

    python benchmarks/rea_vs_random.py --seeds 10 --trials 200 [--plot anytime.png]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from nasforge import api
from nasforge.atomic_files import atomic_path

TARGETS = {"cifar10": 94.25}
OPTIMA = {"cifar10": 94.37, "cifar100": 73.51, "imagenet16-120": 47.31}


def best_curve(outcome) -> tuple[list[float], list[float]]:
    hours, best, clock, so_far = [], [], 0.0, float("-inf")
    for t in outcome.history:
        clock += t.result.cost
        so_far = max(so_far, t.result.objectives["test_accuracy"])
        hours.append(clock / 3600)
        best.append(so_far)
    return hours, best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--datasets", nargs="+", default=["cifar10", "cifar100", "imagenet16-120"])
    parser.add_argument("--strategies", nargs="+", default=["rea", "random", "local"])
    parser.add_argument("--plot", default=None, help="write anytime curves (CIFAR-10) to this PNG")
    args = parser.parse_args()

    curves: dict[str, list] = {}
    means: dict[tuple[str, str], float] = {}
    print(f"best test accuracy within {args.trials} table queries, {args.seeds} seeds (mean ± std)")
    print(f"{'dataset':16s} {'strategy':8s} {'mean':>8s} {'std':>6s} {'optimum':>8s} {'s/run':>6s}")
    for dataset in args.datasets:
        for strategy in args.strategies:
            bests, t0 = [], time.perf_counter()
            for seed in range(args.seeds):
                outcome = api.search(
                    "nb201", strategy, "nb201-table", dataset=dataset, trials=args.trials, seed=seed
                )
                bests.append(outcome.best_result.objectives["test_accuracy"])
                if dataset == "cifar10":
                    curves.setdefault(strategy, []).append(best_curve(outcome))
            per_run = (time.perf_counter() - t0) / args.seeds
            mean, std = statistics.mean(bests), statistics.pstdev(bests)
            means[dataset, strategy] = mean
            print(f"{dataset:16s} {strategy:8s} {mean:8.3f} {std:6.3f} {OPTIMA[dataset]:8.2f} {per_run:6.2f}")

    if "cifar10" in args.datasets and {"rea", "random"} <= set(args.strategies):
        rea, rs = means["cifar10", "rea"], means["cifar10", "random"]
        ok = rea >= TARGETS["cifar10"] and rea > rs
        print(
            f"\nCIFAR-10: REA {rea:.3f} (target >= {TARGETS['cifar10']}) vs random {rs:.3f}: "
            f"{'PASS' if ok else 'FAIL'}"
        )
    if args.plot:
        from nasforge.optional import require

        plt = require("matplotlib.pyplot", extra="plot", feature="anytime plots")
        fig, ax = plt.subplots(figsize=(6, 4))
        for strategy, runs in curves.items():
            for k, (hours, best) in enumerate(runs):
                ax.step(
                    hours,
                    best,
                    where="post",
                    alpha=0.35,
                    color=f"C{list(curves).index(strategy)}",
                    label=strategy if k == 0 else None,
                )
        ax.axhline(OPTIMA["cifar10"], color="k", ls="--", lw=0.8, label="optimum")
        ax.set_xlabel("simulated training time (hours)")
        ax.set_ylabel("best test accuracy so far (%)")
        ax.set_ylim(92.5, 94.5)
        ax.set_title("NAS-Bench-201 CIFAR-10, anytime performance")
        ax.legend()
        fig.tight_layout()
        with atomic_path(args.plot) as tmp:  # the temporary name hides the suffix: give the format
            fig.savefig(tmp, dpi=120, format=Path(args.plot).suffix.lstrip(".") or "png")
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

"""NSGA-II against multi-objective random search on the NAS-Bench-201 table: accuracy vs latency.

Both strategies search the bundled NAS-Bench-201 table (CIFAR-10) for two objectives at
once, the 200-epoch validation accuracy (max) and the recorded latency (min), under the
benchmark protocol: the search observes validation accuracy only; the test accuracy of
what it chose is reported beside it, never used to choose.

Quality is the hypervolume of each run's Pareto front (the region of the objective plane
it dominates), computed on normalised objectives so that accuracy points and
milliseconds weigh alike: each objective is scaled by the table's *true* front (all
15,625 cells), 0 at its ideal value and 1 at its nadir (the worst value on the true
front), as minimisation; the reference point is (1.1, 1.1) in those units, slightly
beyond the nadir so the front's extreme members count. The same reference and scaling
serve every front, so "% of the true front" is the share of the best possible
hypervolume a search reached.

The test-accuracy rows re-measure the fronts the searches chose (by validation) with
their members' test accuracy, against the table's true front on test accuracy (scaled
the same way by that front): what a user who trusts the validation front gets.

    python benchmarks/multiobjective_nb201.py --seeds 10 --trials 200 [--plot front.png]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from nasforge import api
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.pareto import hypervolume, non_dominated
from nasforge_nb201.table import load_table

OBJECTIVES = ("valid_accuracy:max", "latency_ms:min")
STRATEGIES = ("nsga2", "mo-random")
#: The reference point in normalised minimisation units (0 = ideal, 1 = nadir of the true front).
REFERENCE = 1.1


class Scale:
    """Normalised minimisation units of (accuracy, latency), fixed by a reference front."""

    def __init__(self, front: np.ndarray) -> None:
        self.best_acc, self.worst_acc = float(front[:, 0].max()), float(front[:, 0].min())
        self.best_lat, self.worst_lat = float(front[:, 1].min()), float(front[:, 1].max())

    def __call__(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        acc = (self.best_acc - points[:, 0]) / (self.best_acc - self.worst_acc)
        lat = (points[:, 1] - self.best_lat) / (self.worst_lat - self.best_lat)
        return np.column_stack([acc, lat])

    def hypervolume(self, points: np.ndarray) -> float:
        return hypervolume(self(points), [REFERENCE, REFERENCE], [False, False])


def true_front(dataset: str, accuracy: str) -> np.ndarray:
    """(accuracy, latency) of the table's non-dominated cells, over all 15,625."""
    table = load_table()
    points = np.column_stack([table.column(accuracy, dataset), table.column("latency_ms", dataset)])
    return points[non_dominated(points, [True, False])]


def front_points(outcome: SearchOutcome, accuracy: str) -> np.ndarray:
    return np.array(
        [[t.result.objectives[accuracy], t.result.objectives["latency_ms"]] for t in outcome.front]
    )


def run(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    nsga2 = {"population_size": args.population} if args.population is not None else {}
    options = {"nsga2": nsga2, "mo-random": {}}
    results: dict[str, dict[str, Any]] = {}
    for strategy in STRATEGIES:
        row: dict[str, Any] = {"outcomes": []}
        start = time.perf_counter()
        for seed in range(args.seeds):
            row["outcomes"].append(
                api.search(
                    "nb201",
                    strategy,
                    "nb201-table",
                    benchmark_dataset=args.dataset,
                    objectives=list(OBJECTIVES),
                    trials=args.trials,
                    seed=seed,
                    strategy_options=options[strategy],
                )
            )
        row["seconds_per_run"] = (time.perf_counter() - start) / args.seeds
        results[strategy] = row
    return results


def mean_std(values: Sequence[float], digits: int = 4) -> str:
    return f"{statistics.fmean(values):.{digits}f} ± {statistics.pstdev(values):.{digits}f}"


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> None:
    valid_front, test_front = (
        true_front(args.dataset, "valid_accuracy"),
        true_front(args.dataset, "test_accuracy"),
    )
    on_valid, on_test = Scale(valid_front), Scale(test_front)
    true_valid, true_test = on_valid.hypervolume(valid_front), on_test.hypervolume(test_front)
    print(
        f"NAS-Bench-201 ({args.dataset}), two objectives: {', '.join(OBJECTIVES)}; "
        f"{args.trials} queries per run, {args.seeds} seeds (mean ± population std)."
    )
    print(
        "Protocol: the searches observe 200-epoch validation accuracy and recorded latency; the test "
        "accuracy of their fronts is\nreported below, never observed. Hypervolume on normalised objectives: "
        f"0 = ideal, 1 = nadir of the table's true front, reference ({REFERENCE}, {REFERENCE})."
    )
    acc = f"{on_valid.worst_acc:.2f}..{on_valid.best_acc:.2f} %"
    lat = f"{on_valid.best_lat:.2f}..{on_valid.worst_lat:.2f} ms"
    print(
        f"Table's true front over all 15,625 cells: {len(valid_front)} cells by validation (hypervolume "
        f"{true_valid:.4f}), {len(test_front)} by test ({true_test:.4f}); valid accuracy nadir..ideal {acc}, "
        f"latency ideal..nadir {lat}"
    )
    print()
    head = (
        f"{'strategy':10s} {'hypervolume (valid)':>21s} {'% of true':>9s} {'front':>6s} "
        f"{'test acc of best-valid member':>29s} {'hypervolume (test)':>20s} {'% of true':>9s} {'s/run':>6s}"
    )
    print(head)
    hv: dict[str, list[float]] = {}
    for strategy in STRATEGIES:
        outcomes = results[strategy]["outcomes"]
        hv[strategy] = [on_valid.hypervolume(front_points(o, "valid_accuracy")) for o in outcomes]
        hv_test = [on_test.hypervolume(front_points(o, "test_accuracy")) for o in outcomes]
        best_test = [o.best_result.objectives["test_accuracy"] for o in outcomes]
        sizes = [len(o.front) for o in outcomes]
        share, share_test = statistics.fmean(hv[strategy]) / true_valid, statistics.fmean(hv_test) / true_test
        print(
            f"{strategy:10s} {mean_std(hv[strategy]):>21s} {100 * share:8.1f}% "
            f"{statistics.fmean(sizes):6.1f} {mean_std(best_test, 2):>29s} {mean_std(hv_test):>20s} "
            f"{100 * share_test:8.1f}% {results[strategy]['seconds_per_run']:6.2f}"
        )
    table = load_table()
    best_valid = table.optimum(args.dataset, "valid_accuracy")[0]
    found = table.value("test_accuracy", best_valid, args.dataset)
    print(
        f"  (the table's best-validation cell has test accuracy {found:.2f}; 'best-valid member' is the "
        "front's member 0, which `nasforge export RUN` writes)"
    )
    nsga, rand = statistics.fmean(hv["nsga2"]), statistics.fmean(hv["mo-random"])
    wins = sum(a > b for a, b in zip(hv["nsga2"], hv["mo-random"], strict=True))
    ties = sum(a == b for a, b in zip(hv["nsga2"], hv["mo-random"], strict=True))
    verdict = "higher" if nsga > rand else "not higher"
    print(
        f"\nnsga2's mean hypervolume is {verdict} than mo-random's: {nsga:.4f} vs {rand:.4f} "
        f"({100 * (nsga - rand) / rand:+.1f} %), higher on {wins} of {args.seeds} seeds"
        + (f" ({ties} ties)" if ties else "")
        + f"; of the true front's {true_valid:.4f}: {100 * nsga / true_valid:.1f} % vs "
        f"{100 * rand / true_valid:.1f} %"
    )


def plot(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> None:
    """Seed 0: nsga2's evaluated cells and front, mo-random's front, every table cell and
    the table's true front, on validation accuracy and latency."""
    from nasforge.kernel.objectives import SearchGoal
    from nasforge.tools.pareto_plot import Series, plot_front

    table = load_table()
    cells = np.column_stack(
        [table.column("valid_accuracy", args.dataset), table.column("latency_ms", args.dataset)]
    )
    nsga, rand = results["nsga2"]["outcomes"][0], results["mo-random"]["outcomes"][0]
    extra = [
        Series("all 15,625 cells", cells.tolist(), front=False, color="0.85"),
        Series("table's true front", true_front(args.dataset, "valid_accuracy").tolist(), color="black"),
        Series(
            f"mo-random: front ({len(rand.front)})",
            front_points(rand, "valid_accuracy").tolist(),
            color="tab:blue",
        ),
    ]
    plot_front(
        nsga.history,
        nsga.front,
        SearchGoal.of(list(OBJECTIVES)),
        args.plot,
        title=f"NAS-Bench-201 {args.dataset}, seed 0, {args.trials} queries",
        label="nsga2",
        extra=extra,
    )
    print(f"wrote {args.plot}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--dataset", default="cifar10", choices=["cifar10", "cifar100", "imagenet16-120"])
    parser.add_argument(
        "--population", type=int, default=None, help="nsga2's population_size (default: its own, 10)"
    )
    parser.add_argument("--plot", default=None, help="draw seed 0's fronts and the true front to this file")
    args = parser.parse_args()
    if args.seeds < 1 or args.trials < 1:
        parser.error("--seeds and --trials must be at least 1")
    print("$ python " + " ".join(shlex.quote(a) for a in sys.argv))
    population = args.population if args.population is not None else "10 (default)"
    print(
        f"settings: dataset {args.dataset}, seeds 0..{args.seeds - 1}, {args.trials} trials, nsga2 "
        f"population_size={population} tournament_size=2 (mutation only), mo-random defaults, dedup on\n"
    )
    started = time.perf_counter()
    results = run(args)
    report(args, results)
    if args.plot:
        plot(args, results)
    print(f"\nwall time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

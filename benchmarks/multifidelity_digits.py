"""Hyperband and successive halving against random search with full training, on digits.

Every method searches NAS-Bench-201 cells (``C=8``, ``N=1`` by default) trained by the
core's short-train evaluator on sklearn digits, observing validation accuracy; the full
budget is ``--max-epochs`` (9: rungs of 1, 3 and 9 epochs with eta=3). Random search
trains every architecture for the full budget (``--random-trials`` of them);
``sh`` and ``hyperband`` run ``--brackets`` brackets. A multi-fidelity run's best is
chosen among its full-budget trials only (a 1-epoch number is a cheap guess, not what a
network reaches). Per method, over ``--seeds`` seeds (each seed also seeds the
evaluator: same split and initialisation for every method of that seed):

- the best validation accuracy found (mean ± std) and the total training epochs spent;
- ``reached``: in how many seeds the method's best equals or beats random search's best
  of that seed, and the mean epochs it had spent when it first did (its incumbent curve);
- ``random at same epochs``: random search's best after the epochs the method spent
  (its incumbent curve read there), the equal-budget comparison.

Nothing is tuned: every strategy runs on its defaults (eta=3, min 1 epoch). There is no
test split in the search; only validation accuracy is reported. Runs are journaled under
``--runs`` (one directory per method and seed), so an interrupted benchmark continues
where it stopped and a finished one is only re-read.

    nice -n 10 python benchmarks/multifidelity_digits.py --seeds 5
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from nasforge import api
from nasforge.result import SearchOutcome

METHODS = ("random", "sh", "hyperband")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--max-epochs", type=int, default=9)
    p.add_argument("--random-trials", type=int, default=12)
    p.add_argument("--brackets", type=int, default=2)
    p.add_argument("--C", type=int, default=8)
    p.add_argument("--N", type=int, default=1)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--runs", type=Path, default=Path("runs/multifidelity-digits"))
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args(argv)


def search(method: str, seed: int, args: argparse.Namespace) -> SearchOutcome:
    options: dict[str, Any] = {} if method == "random" else {"brackets": args.brackets}
    trials = args.random_trials if method == "random" else 10_000  # sh/hyperband end by brackets
    size = f"t{args.random_trials}" if method == "random" else f"b{args.brackets}"
    return api.search(
        "nb201",
        method,
        "short-train",
        train_data="digits",
        trials=trials,
        seed=seed,
        strategy_options=options,
        evaluator_options={"epochs": args.max_epochs, "build": {"C": args.C, "N": args.N}},
        run_dir=args.runs / f"C{args.C}-N{args.N}-E{args.max_epochs}" / f"{method}-{size}-seed{seed}",
    )


def curve(outcome: SearchOutcome, full: int) -> list[tuple[int, float]]:
    """(epochs spent so far, best full-budget validation accuracy so far) after each trial."""
    spent, best, points = 0, -math.inf, []
    for t in outcome.history:
        epochs = full if t.fidelity is None else t.fidelity
        spent += epochs
        if epochs == full and not t.result.failed:
            best = max(best, t.result.objectives.get("valid_accuracy", -math.inf))
        points.append((spent, best))
    return points


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    methods = args.methods.split(",")
    rows: dict[str, dict[str, list[float]]] = {
        m: {"best": [], "epochs": [], "reach": [], "random_same": []} for m in methods
    }
    hits: dict[str, int] = dict.fromkeys(methods, 0)
    start = time.perf_counter()
    for seed in range(args.seeds):
        curves = {m: curve(search(m, seed, args), args.max_epochs) for m in methods}
        target = curves["random"][-1][1] if "random" in curves else math.nan
        for m, points in curves.items():
            rows[m]["best"].append(points[-1][1])
            rows[m]["epochs"].append(points[-1][0])
            if "random" in curves:
                same = [best for spent, best in curves["random"] if spent <= points[-1][0]]
                rows[m]["random_same"].append(same[-1] if same else math.nan)
            reached = [spent for spent, best in points if best >= target]
            if reached:
                hits[m] += 1
                rows[m]["reach"].append(reached[0])
        print(
            f"seed {seed}: "
            + ", ".join(f"{m} {c[-1][1]:.2f}% in {c[-1][0]} epochs" for m, c in curves.items())
            + f" ({time.perf_counter() - start:.0f} s so far)",
            flush=True,
        )
    print(
        f"\nNB201 cells C={args.C} N={args.N} on digits (short-train, full budget {args.max_epochs} epochs), "
        f"{args.seeds} seeds; random: {args.random_trials} architectures fully trained; sh, hyperband: "
        f"{args.brackets} brackets (eta=3, min 1 epoch). Validation accuracy, %."
    )
    print(
        f"{'method':<10} {'best valid acc':>16} {'epochs spent':>14} {'reached random':>15} {'at epochs':>10}"
        f" {'random at same epochs':>22}"
    )
    for m in methods:
        best, epochs, reach = rows[m]["best"], rows[m]["epochs"], rows[m]["reach"]
        spread = statistics.stdev(best) if len(best) > 1 else 0.0
        at = f"{statistics.mean(reach):.0f}" if reach else "-"
        same = rows[m]["random_same"]
        same_text = f"{statistics.mean(same):.2f}" if same and not any(map(math.isnan, same)) else "-"
        print(
            f"{m:<10} {statistics.mean(best):>9.2f} ± {spread:<4.2f} {statistics.mean(epochs):>14.0f} "
            f"{hits[m]:>9}/{args.seeds:<5} {at:>10} {same_text:>22}"
        )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

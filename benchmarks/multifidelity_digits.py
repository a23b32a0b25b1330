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
  (its incumbent curve read there), the equal-budget comparison;
- ``chosen, re-measured``: each method's chosen architecture trained again at the full
  budget with ``--remeasure`` fresh evaluator seeds (another split and initialisation):
  what the choice is worth once the luck of its own measurement is gone (a best of 12
  noisy numbers is inflated more than a best of 2).

Two diagnostics say whether the task gives multi-fidelity anything to exploit: how well
the accuracy after k epochs ranks architectures by their full-budget accuracy (Spearman
over random search's learning curves, every seed), and the spread of full-budget
accuracies between architectures against the spread of one architecture re-measured.

Nothing is tuned: every strategy runs on its defaults (eta=3, min 1 epoch). There is no
test split in the search; only validation accuracy is reported. Runs are journaled under
``--runs`` (one directory per method and seed), so an interrupted benchmark continues
where it stopped and a finished one is only re-read.

    nice -n 10 python benchmarks/multifidelity_digits.py --seeds 5
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

import torch

import nasforge
from nasforge import Genotype, api
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.outcome import SearchOutcome
from nasforge.run.experiment import Experiment
from nasforge.run.fidelity_spent import at_full
from nasforge.tools.scoring.stats import spearman

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
    p.add_argument("--remeasure", type=int, default=3, help="fresh seeds per chosen architecture (0: skip)")
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


def remeasure(g: Genotype, args: argparse.Namespace, cache: Path) -> list[float]:
    """Full-budget validation accuracy of ``g`` under evaluator seeds 1000, 1001, ...
    (a fresh split and initialisation each), cached by genotype and settings."""
    key = json.dumps(
        {"g": g.to_json(), "C": args.C, "N": args.N, "E": args.max_epochs, "code": nasforge.__version__},
        sort_keys=True,
    )
    known: dict[str, list[float]] = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            known[row["key"]] = row["values"]
    values = known.get(key, [])
    for k in range(len(values), args.remeasure):
        spec = api.build_spec(
            "nb201",
            "random",
            "short-train",
            train_data="digits",
            trials=1,
            seed=1000 + k,
            evaluator_options={"epochs": args.max_epochs, "build": {"C": args.C, "N": args.N}},
        )
        experiment = Experiment.from_spec(spec, progress=False)
        values.append(float(experiment.evaluator.evaluate(g).objectives["valid_accuracy"]))
        known[key] = values
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            cache, "".join(json.dumps({"key": k2, "values": v}) + "\n" for k2, v in known.items())
        )
    return values[: args.remeasure]


def chosen(outcome: SearchOutcome, full: int) -> Genotype:
    """The best full-budget trial's architecture (what the benchmark calls the method's best)."""
    trials = [t for t in outcome.history if at_full(t, full) and not t.result.failed]
    return max(trials, key=lambda t: t.result.objectives["valid_accuracy"]).genotype


def rank_diagnostic(outcomes: list[SearchOutcome], full: int) -> list[float]:
    """Spearman between the accuracy after epoch k and after the last epoch, over every
    full-budget learning curve of ``outcomes``, for k = 1 .. full - 1."""
    curves = [
        t.result.metadata["per_epoch"]["valid_accuracy"]
        for o in outcomes
        for t in o.history
        if not t.result.failed
        and len(t.result.metadata.get("per_epoch", {}).get("valid_accuracy", [])) == full
    ]
    return [spearman([c[k] for c in curves], [c[-1] for c in curves]) for k in range(full - 1)]


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
        m: {"best": [], "epochs": [], "reach": [], "random_same": [], "again": []} for m in methods
    }
    outcomes: dict[str, list[SearchOutcome]] = {m: [] for m in methods}
    cache = args.runs / f"C{args.C}-N{args.N}-E{args.max_epochs}" / "remeasured.jsonl"
    hits: dict[str, int] = dict.fromkeys(methods, 0)
    start = time.perf_counter()
    for seed in range(args.seeds):
        for m in methods:
            outcomes[m].append(search(m, seed, args))
        curves = {m: curve(outcomes[m][-1], args.max_epochs) for m in methods}
        if args.remeasure:
            for m in methods:
                again = remeasure(chosen(outcomes[m][-1], args.max_epochs), args, cache)
                rows[m]["again"].append(statistics.mean(again))
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
        f" {'random at same epochs':>22} {'chosen, re-measured (>= random)':>32}"
    )
    for m in methods:
        best, epochs, reach = rows[m]["best"], rows[m]["epochs"], rows[m]["reach"]
        spread = statistics.stdev(best) if len(best) > 1 else 0.0
        at = f"{statistics.mean(reach):.0f}" if reach else "-"
        same = rows[m]["random_same"]
        same_text = f"{statistics.mean(same):.2f}" if same and not any(map(math.isnan, same)) else "-"
        again = rows[m]["again"]
        again_text = "-"
        if again:
            level = (
                sum(a >= r for a, r in zip(again, rows["random"]["again"], strict=True))
                if "random" in rows
                else 0
            )
            again_text = (
                f"{statistics.mean(again):.2f} ± {statistics.stdev(again) if len(again) > 1 else 0.0:.2f}"
                + (f" ({level}/{len(again)})" if "random" in rows else "")
            )
        print(
            f"{m:<10} {statistics.mean(best):>9.2f} ± {spread:<4.2f} {statistics.mean(epochs):>14.0f} "
            f"{hits[m]:>9}/{args.seeds:<5} {at:>10} {same_text:>22} {again_text:>32}"
        )
    if args.remeasure:
        print(
            "(chosen, re-measured: mean over seeds of the chosen architecture's accuracy under "
            f"{args.remeasure} fresh evaluator seeds; in parentheses, the seeds where it is at least "
            "random search's)"
        )
    if "random" in outcomes:
        rho = rank_diagnostic(outcomes["random"], args.max_epochs)
        print(
            "\nHow well a short training ranks architectures (Spearman of the accuracy after epoch k "
            f"with the accuracy after epoch {args.max_epochs}, "
            f"{sum(len(o.history) for o in outcomes['random'])} random-search learning curves): "
            + ", ".join(f"k={k + 1} {r:.2f}" for k, r in enumerate(rho))
        )
        finals = sorted(
            t.result.objectives["valid_accuracy"]
            for o in outcomes["random"]
            for t in o.history
            if not t.result.failed
        )
        middle = finals[len(finals) // 10 : len(finals) - len(finals) // 10] or finals
        print(
            f"Full-budget accuracy between architectures: median {statistics.median(finals):.2f}, "
            f"std {statistics.stdev(middle):.2f} over the middle 80% ({len(finals)} architectures)"
        )
        if args.remeasure > 1 and cache.exists():
            within = [
                statistics.stdev(json.loads(line)["values"][: args.remeasure])
                for line in cache.read_text().splitlines()
                if len(json.loads(line)["values"]) >= 2
            ]
            if within:
                print(
                    f"One architecture re-measured ({args.remeasure} seeds, {len(within)} architectures): "
                    f"mean within-architecture std {statistics.mean(within):.2f}"
                )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

"""Hyperband, successive halving and median pruning against random search on MNIST-1D, at equal epochs.

On digits every NAS-Bench-201 cell scores 98-99 % and a short training ranks them at a
Spearman of 0.11-0.25, so multi-fidelity had nothing to exploit. MNIST-1D separates
cells by several points. Every method searches NB201 cells (``--C 8 --N 1``) trained by
the core's short-train evaluator on MNIST-1D's training split (70 % trains, 30 %
validates; the search sees validation accuracy only), full budget ``--max-epochs`` (9:
rungs of 1, 3 and 9 epochs at eta = 3):

- ``random``: ``--random-trials`` cells, each trained for the full budget;
- ``sh`` and ``hyperband``: ``--brackets`` brackets each (defaults: about random's epochs);
- ``median``: random search whose trainings stop when their curve falls below the
  median of the completed ones (``--strategy median -o strategy=random``, its defaults).

Equal budgets: per seed, every method is cut at the same number of training epochs,
the smallest total any method spent (``E``); its choice is its best full-budget trial
within ``E`` epochs (by validation accuracy, as the search saw it). Then:

- the anytime curve: the best full-budget validation accuracy after e epochs, mean over seeds;
- the chosen cell's **test accuracy**: trained again from scratch for the full budget on
  the whole training split under ``--remeasure`` fresh seeds (another initialisation and
  batch order), scored on MNIST-1D's test split, which no search touches;
- diagnostics: how well the accuracy after k epochs of a full 9-epoch schedule ranks
  random search's cells by their final accuracy (a truncated long schedule), and how well
  a complete k-epoch schedule does (what short-train's fidelity trains: the learning rate
  annealed over the k epochs).

Nothing is tuned; every strategy runs on its defaults. Searches are journaled under
``--runs`` in a directory per setting, method, seed and code version (an interrupted
benchmark continues; a finished one is re-read), re-measurements and diagnostics kept in
record files keyed by settings and code version (``benchmarks/records.py``).

    OMP_NUM_THREADS=1 nice -n 15 python benchmarks/multifidelity_mnist1d.py --seeds 5
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from records import RecordFile, code_version

from nasforge import Genotype, api, get_registry
from nasforge.kernel.datasets import load_dataset
from nasforge.kernel.outcome import SearchOutcome
from nasforge.run.ensemble_training import MemberRecipe, train_network
from nasforge.run.fidelity_spent import at_full
from nasforge.tools.scoring.stats import spearman
from nasforge.tools.short_train import ShortTrainEvaluator

METHODS = ("random", "sh", "hyperband", "median")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--max-epochs", type=int, default=9)
    p.add_argument("--random-trials", type=int, default=12)
    p.add_argument("--brackets", type=int, default=4, help="SH and Hyperband brackets (4: about 105 epochs)")
    p.add_argument(
        "--median-trials",
        type=int,
        default=65,
        help="trials of median pruning (65: about random's epochs; after 5 complete trainings it stops "
        "most at epoch 1)",
    )
    p.add_argument("--C", type=int, default=8)
    p.add_argument("--N", type=int, default=1)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--runs", type=Path, default=Path("runs/multifidelity-mnist1d"))
    p.add_argument("--remeasure", type=int, default=3, help="fresh seeds per chosen cell (test accuracy)")
    p.add_argument("--plot", type=Path, default=None, help="draw the anytime curves here (PNG)")
    return p.parse_args(argv)


def evaluator_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"epochs": args.max_epochs, "build": {"C": args.C, "N": args.N}}


def search(method: str, seed: int, args: argparse.Namespace, code: str) -> SearchOutcome:
    options: dict[str, Any] = {}
    trials = 10_000  # sh/hyperband end by their brackets
    if method in ("sh", "hyperband"):
        options = {"brackets": args.brackets}
    elif method == "random":
        trials = args.random_trials
    else:
        options, trials = {"strategy": "random"}, args.median_trials
    size = {"random": f"t{trials}", "median": f"t{trials}"}.get(method, f"b{args.brackets}")
    setting = f"C{args.C}-N{args.N}-E{args.max_epochs}-{code}"
    return api.search(
        "nb201",
        method,
        "short-train",
        train_data="mnist1d",
        trials=trials,
        seed=seed,
        strategy_options=options,
        evaluator_options=evaluator_options(args),
        run_dir=args.runs / setting / f"{method}-{size}-seed{seed}",
    )


def spent(trial: Any, full: int) -> int:
    """Epochs a trial trained (a pruned one: up to where it stopped)."""
    if "epochs" in trial.result.metadata:
        return int(trial.result.metadata["epochs"])
    return full if trial.fidelity is None else int(trial.fidelity)


def curve(outcome: SearchOutcome, full: int) -> list[tuple[int, float, Genotype | None]]:
    """(epochs so far, best full-budget validation accuracy so far, its cell) after each trial."""
    total, best, chosen, points = 0, -math.inf, None, []
    for t in outcome.history:
        total += spent(t, full)
        complete = at_full(t, full) and not t.result.failed and "stopped_at" not in t.result.metadata
        value = t.result.objectives.get("valid_accuracy", -math.inf)
        if complete and value > best:
            best, chosen = value, t.genotype
        points.append((total, best, chosen))
    return points


def at_budget(points: list[tuple[int, float, Genotype | None]], budget: int) -> tuple[float, Genotype | None]:
    within = [(b, g) for e, b, g in points if e <= budget]
    return within[-1] if within else (-math.inf, None)


class Remeasure:
    """A chosen cell's test accuracy, trained from scratch on the whole training split."""

    def __init__(self, args: argparse.Namespace, records: RecordFile) -> None:
        registry = get_registry()
        self.space = registry.space("nb201")
        self.train = load_dataset("mnist1d", registry=registry)
        self.test = load_dataset("mnist1d", registry=registry, train=False)
        self.args, self.records = args, records

    def __call__(self, g: Genotype) -> list[float]:
        values = []
        for k in range(self.args.remeasure):
            settings = {
                "kind": "remeasure",
                "genotype": self.space.format(g),
                "C": self.args.C,
                "N": self.args.N,
                "epochs": self.args.max_epochs,
                "seed": 1000 + k,
            }
            found = self.records.records([settings])
            if not found:
                recipe = MemberRecipe(epochs=self.args.max_epochs)
                build = {"C": self.args.C, "N": self.args.N}
                model = train_network(
                    self.space, g, self.train, seed=1000 + k, recipe=recipe, build_options=build
                )
                with torch.no_grad():
                    accuracy = 100.0 * float((model(self.test.x).argmax(1) == self.test.y).double().mean())
                found = [self.records.append(settings, {"test_accuracy": accuracy})]
            values.append(found[0]["test_accuracy"])
        return values


def short_schedules(
    outcome: SearchOutcome, seed: int, args: argparse.Namespace, records: RecordFile
) -> list[dict]:
    """Random search's cells evaluated with complete short schedules (1 and 3 epochs), as
    a multi-fidelity rung trains them; with the 9-epoch result and its per-epoch curve."""
    registry = get_registry()
    evaluator = None
    rows = []
    for t in outcome.history:
        if t.result.failed:
            continue
        text = registry.space("nb201").format(t.genotype)
        row = {
            "final": t.result.objectives["valid_accuracy"],
            "curve": t.result.metadata["per_epoch"]["valid_accuracy"],
        }
        for k in (1, 3):
            settings = {
                "kind": "short",
                "genotype": text,
                "C": args.C,
                "N": args.N,
                "epochs": k,
                "seed": seed,
            }
            found = records.records([settings])
            if not found:
                if evaluator is None:
                    evaluator = ShortTrainEvaluator(
                        registry.space("nb201"),
                        dataset="mnist1d",
                        registry=registry,
                        seed=seed,
                        **evaluator_options(args),
                    )
                value = evaluator.evaluate_at(t.genotype, k).objectives["valid_accuracy"]
                found = [records.append(settings, {"valid_accuracy": value})]
            row[f"short{k}"] = found[0]["valid_accuracy"]
        rows.append(row)
    return rows


def mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.2f} ± {sd:.2f}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or "random" not in methods:
        print(f"error: --methods takes {', '.join(METHODS)} and must include random", file=sys.stderr)
        return 2
    code = code_version("nasforge", "nasforge_search", "nasforge_nb201")
    records = RecordFile(args.runs / "records.jsonl", code)
    remeasure = Remeasure(args, records)
    start = time.perf_counter()
    rows: dict[str, dict[str, list[Any]]] = {m: {"valid": [], "test": [], "epochs": []} for m in methods}
    anytime: dict[str, list[list[tuple[int, float, Any]]]] = {m: [] for m in methods}
    diagnostics: list[dict] = []
    budgets = []
    for seed in range(args.seeds):
        outcomes = {m: search(m, seed, args, code) for m in methods}
        points = {m: curve(o, args.max_epochs) for m, o in outcomes.items()}
        budget = min(p[-1][0] for p in points.values())
        budgets.append(budget)
        for m in methods:
            anytime[m].append(points[m])
            best, chosen = at_budget(points[m], budget)
            rows[m]["valid"].append(best)
            rows[m]["epochs"].append(points[m][-1][0])
            if args.remeasure:  # None: no full-budget trial within the cut, so nothing was chosen
                rows[m]["test"].append(None if chosen is None else statistics.mean(remeasure(chosen)))
        diagnostics += short_schedules(outcomes["random"], seed, args, records)
        print(
            f"seed {seed} (equal budget {budget} epochs): "
            + ", ".join(
                f"{m} {rows[m]['valid'][-1]:.2f}"
                + (f" / test {shown(rows[m]['test'][-1])}" if rows[m]["test"] else "")
                for m in methods
            )
            + f"  ({time.perf_counter() - start:.0f} s so far)",
            flush=True,
        )
    report(args, methods, rows, anytime, diagnostics, budgets, code, time.perf_counter() - start)
    return 0


def report(args, methods, rows, anytime, diagnostics, budgets, code, seconds) -> None:
    print(
        f"\nNB201 cells C={args.C} N={args.N} on MNIST-1D (short-train, full budget {args.max_epochs} "
        "epochs, "
        f"validation = 30 % of the training split), {args.seeds} seeds; random {args.random_trials} cells, "
        f"sh/hyperband {args.brackets} brackets (eta 3, min 1 epoch), median pruning around random "
        f"({args.median_trials} trials); each cut at the seed's equal budget (epochs {budgets}); code {code}"
    )
    print(
        f"{'method':<10} {'epochs run':>10} {'best valid acc at E':>20} "
        f"{'chosen cell: test acc (re-measured)':>38} {'>= random':>10}"
    )
    for m in methods:
        pairs = paired(rows[m]["test"], rows["random"]["test"])
        test = [a for a in rows[m]["test"] if a is not None]
        valid = [v for v in rows[m]["valid"] if math.isfinite(v)]
        level = f"{sum(a >= r for a, r in pairs)}/{len(rows[m]['test'])}" if test else "-"
        print(
            f"{m:<10} {statistics.mean(rows[m]['epochs']):>10.0f} {mean_sd(valid) if valid else '-':>20} "
            f"{mean_sd(test) if test else '-':>38} {level:>10}"
        )
        if len(valid) < len(rows[m]["valid"]):
            print(
                f"  ({m}: no full-budget trial within the cut on {len(rows[m]['valid']) - len(valid)} seeds)"
            )
    if args.remeasure:
        for m in methods:
            pairs = paired(rows[m]["test"], rows["random"]["test"])
            if m == "random" or not pairs:
                continue
            diffs = [a - b for a, b in pairs]
            low, high = bootstrap_mean(diffs)
            print(
                f"  {m} - random, test accuracy: {statistics.mean(diffs):+.2f} points "
                f"(95 % bootstrap over the {len(diffs)} seeds where both chose: {low:+.2f} .. {high:+.2f})"
            )
        print(
            f"(test acc: each seed's chosen cell trained {args.max_epochs} epochs on all 4,000 training "
            "sequences "
            f"under {args.remeasure} fresh seeds, scored on the 1,000 test sequences; mean ± sd over seeds)"
        )
    checkpoints = sorted(
        {args.max_epochs * k for k in range(1, 1 + min(budgets) // args.max_epochs)} | {min(budgets)}
    )
    print("\nAnytime: best full-budget validation accuracy after e epochs (mean over seeds)")
    print(f"{'method':<10}" + "".join(f"{e:>8}" for e in checkpoints))
    for m in methods:
        cells = []
        for e in checkpoints:
            values = [at_budget(p, e)[0] for p in anytime[m]]
            finite = [v for v in values if math.isfinite(v)]
            cells.append(f"{statistics.mean(finite):>8.2f}" if len(finite) == len(values) else f"{'-':>8}")
        print(f"{m:<10}" + "".join(cells))
    full = args.max_epochs
    finals = [d["final"] for d in diagnostics]
    truncated = [spearman([d["curve"][k] for d in diagnostics], finals) for k in range(full - 1)]
    print(
        f"\nRanking random search's {len(diagnostics)} cells by their {full}-epoch validation accuracy "
        "(Spearman):"
        f"\n  accuracy after epoch k of the {full}-epoch schedule (truncated): "
        + ", ".join(f"k={k + 1} {r:.2f}" for k, r in enumerate(truncated))
        + "\n  a complete k-epoch schedule (what an SH/Hyperband rung trains): "
        + ", ".join(f"k={k} {spearman([d[f'short{k}'] for d in diagnostics], finals):.2f}" for k in (1, 3))
    )
    spread = sorted(finals)
    middle = spread[len(spread) // 10 : len(spread) - len(spread) // 10] or spread
    print(
        f"{full}-epoch validation accuracy between cells: median {statistics.median(finals):.2f}, range "
        f"{min(finals):.2f}-{max(finals):.2f}, std over the middle 80 % {statistics.stdev(middle):.2f}"
    )
    print(f"({seconds:.0f} s)")
    if args.plot is not None:
        plot(args, methods, anytime, min(budgets))


def shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def paired(these: list[float | None], others: list[float | None]) -> list[tuple[float, float]]:
    """Seeds on which both methods chose a cell (a method may have none within the cut)."""
    return [(a, b) for a, b in zip(these, others, strict=True) if a is not None and b is not None]


def bootstrap_mean(values: list[float], draws: int = 10_000, seed: int = 0) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(statistics.mean(rng.choices(values, k=len(values))) for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def plot(args, methods, anytime, budget: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for m in methods:
        xs = list(range(args.max_epochs, budget + 1))
        ys = []
        for e in xs:
            values = [at_budget(p, e)[0] for p in anytime[m]]
            ys.append(statistics.mean(values) if all(map(math.isfinite, values)) else math.nan)
        ax.plot(xs, ys, label=m)
    ax.set_xlabel("training epochs spent")
    ax.set_ylabel("best full-budget validation accuracy (%)")
    ax.set_title(f"MNIST-1D, NB201 C={args.C} N={args.N}, mean of {args.seeds} seeds")
    ax.legend()
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=120, bbox_inches="tight")
    print(f"anytime curves drawn to {args.plot}")


if __name__ == "__main__":
    raise SystemExit(main())

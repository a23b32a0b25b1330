"""DARTS vs PR-DARTS on the NAS-Bench-201 supernet: skip share and table accuracy, 10 seeds.

Shown: DARTS's tendency to favour skip connections on the NB201
supernet (skip share of its derived cell vs PR-DARTS's), with the bundled table's
accuracy of both derived cells over seeds 0-9 (mean ± std and a 95 % Student-t interval
of the mean), next to the papers' numbers. A control row, "DARTS without none", derives
each DARTS search's cell again with the zero op excluded (PR-DARTS's rule; DARTS on NB201
keeps ``none`` in the arg-max), from the same alphas: no extra search.

Settings (stated, none tuned to a target):
- Search data: sklearn digits (1,797 8x8 images, the only offline image data), split
  50/50 into weight and architecture halves; NB201 supernet C = 8, N = 1; 1 thread.
- Both strategies: batch 64 (DARTS's; PR-DARTS's official batch of 250 would give it 4
  steps an epoch on 899 images, 3.5x fewer than DARTS), first-order DARTS, PR-DARTS
  preset ``official-code`` (tau 1 -> 0.1, the preset whose regularisers have a gradient
  over the whole run), all other settings the strategies' defaults.
- Budget: 150 epochs with Adam lr 3e-3 on the architecture. 150 x 14 steps x 3e-3 =
  6.3, about the architecture budget of DARTS on CIFAR-10 (50 x 391 steps x 3e-4 =
  5.9; an Adam step moves a parameter by about lr), with 2,100 weight steps.
  At DARTS's own 3e-4 on digits the alphas move by < 0.07 in 50 epochs (noise), and
  with 50 epochs at 3e-3 (the earlier README rows) skip has not yet overtaken.
- Derived cells are read in the benchmark table (200-epoch test accuracy, %).

Runs are appended to ``--results`` (JSON lines) and skipped when already there with the
same settings and the same code (``benchmarks/records.py``; ``--recompute`` ignores earlier
records), so the seeds can run in separate invocations; the table is printed from the file. Each row also
keeps the skip share of the cell derived after every epoch (the skip trajectory) and the
final alphas. A seed gives the same cell in any fresh process with the same torch build,
CPU and thread count (tested in tests/plugins/darts/test_skip_seed_determinism.py; this
script fixes 1 thread: 2 threads already change the alphas by ~1e-9 after 3 steps, and
2,100 steps can turn that into another cell); records of older code are not
reported (``--code`` names the code versions to report, e.g. after an edit that does not
change the searches; the report prints which versions it used).

    python benchmarks/darts_skip_nb201.py                    # 20 searches, ~50 CPU-min on one thread
    python benchmarks/darts_skip_nb201.py --seeds 0 --epochs 5   # a quick look
    python benchmarks/darts_skip_nb201.py --strategies 'prdarts[official-code]' --seeds 0,1
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

import torch
from records import RecordFile, code_version

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import get_registry
from nasforge_darts.table_compare import TABLE_DATASETS, compare_on_table, table_accuracy

STRATEGIES = {"darts": ("darts", {}), "prdarts[official-code]": ("prdarts", {"preset": "official-code"})}

#: Published NB201 numbers (CIFAR-10 search, test accuracy %, NB201 paper Table 5; the
#: "± 0.00" is the paper's: every DARTS run there found the all-skip cell).
PAPER = {
    "DARTS-V1 and V2, NB201 paper (all-skip cell)": (1.00, (54.30, 0.00), (15.61, 0.00), (16.32, 0.00)),
}
#: The control row: DARTS's searches, cells derived without the zero op.
WITHOUT_NONE = "darts without none"
#: Two-sided 95 % Student-t quantiles t_{0.975, df} (df = n - 1), df 1..30.
T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
OPTIMUM = (94.37, 73.51, 47.31)


def settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "arch_lr": args.arch_lr,
        "supernet": {"C": args.C, "N": args.N},
        "eval_every": args.epochs,
    }


#: The packages whose code computes the numbers (their digest keys the records).
CODE = ("nasforge", "nasforge_darts", "nasforge_nb201")


def run_settings(common: dict[str, Any], label: str, seed: int) -> dict[str, Any]:
    name, options = STRATEGIES[label]
    return {**common, "label": label, "strategy": name, "options": options, "seed": seed}


def run(args: argparse.Namespace, file: RecordFile) -> list[dict[str, Any]]:
    common = settings(args)
    wanted = [run_settings(common, label, seed) for label in args.strategies for seed in args.seeds]
    for key in wanted:
        if args.report_only or file.has(key):
            continue
        (row,) = compare_on_table(
            seeds=(key["seed"],), strategies=((key["strategy"], key["options"]),), common=common
        )
        file.append(key, {**row.to_json(), "common": common})
        print(
            f"{key['label']} seed {key['seed']}: skip share {row.skip_share:.2f}, "
            f"cifar10 {row.accuracy['cifar10']:.2f}, {row.seconds:.0f} s, {row.genotype}"
            + (
                ""
                if row.without_zero is None
                else f"; without none: skip share {row.without_zero['skip_share']:.2f}, "
                f"cifar10 {row.without_zero['accuracy']['cifar10']:.2f}, {row.without_zero['genotype']}"
            ),
            flush=True,
        )
    return file.records(wanted)


def reported(args: argparse.Namespace, file: RecordFile) -> list[dict[str, Any]]:
    """The records to report: the current code's, or those of each version in ``--code``."""
    if not args.code:
        return run(args, file)
    if not args.report_only:
        raise SystemExit("--code reports earlier records; use it with --report-only")
    common = settings(args)
    wanted = [run_settings(common, label, seed) for label in args.strategies for seed in args.seeds]
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for code in args.code:  # a later version listed wins for the same (strategy, seed)
        for r in RecordFile(args.results, code).records(wanted):
            found[(r["strategy"], r["seed"])] = r
    return list(found.values())


def mean_std(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


def t_interval(values: list[float]) -> tuple[float, float] | None:
    """The 95 % Student-t confidence interval of the mean (None below 2 values)."""
    n = len(values)
    if n < 2:
        return None
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    half = t * statistics.stdev(values) / math.sqrt(n)
    mean = statistics.fmean(values)
    return mean - half, mean + half


def mean_std_ci(values: list[float]) -> str:
    ci = t_interval(values)
    return mean_std(values) + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")


def control_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ "DARTS without none": each DARTS record's cell derived again without the zero op."""
    out = []
    for r in rows:
        extra = r.get("without_zero")
        if r["strategy"] == "darts" and extra:
            out.append({**r, **extra, "strategy": WITHOUT_NONE, "skip_share_by_epoch": []})
    return out


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    space = get_registry().get("space", "nb201")()
    rows = rows + control_rows(rows)
    labels = [*args.strategies, *([WITHOUT_NONE] if "darts" in args.strategies else [])]
    codes = sorted({r["code"] for r in rows})
    print(f"\nSettings: {json.dumps(settings(args))}; seeds {args.seeds}; code {', '.join(codes) or '-'}\n")
    print("| strategy | seed | skip share | " + " | ".join(TABLE_DATASETS) + " | derived cell |")
    print("|---|---|---|" + "---|" * len(TABLE_DATASETS) + "---|")
    for label in labels:
        for r in sorted((r for r in rows if r["strategy"] == label), key=lambda r: r["seed"]):
            accs = " | ".join(f"{r['accuracy'][d]:.2f}" for d in TABLE_DATASETS)
            print(f"| {r['strategy']} | {r['seed']} | {r['skip_share']:.2f} | {accs} | `{r['genotype']}` |")

    print("\nmean ± std [95 % Student-t confidence interval of the mean, t_{0.975, n-1} s / sqrt(n)]:\n")
    print("| strategy | skip share of derived cell | " + " | ".join(TABLE_DATASETS) + " |")
    print("|---|---|" + "---|" * len(TABLE_DATASETS))
    for label in labels:
        group = [r for r in rows if r["strategy"] == label]
        if not group:
            continue
        cells = [mean_std_ci([r["skip_share"] for r in group])]
        cells += [mean_std_ci([r["accuracy"][d] for r in group]) for d in TABLE_DATASETS]
        print(f"| {label} ({len(group)} seeds) | " + " | ".join(cells) + " |")
    for label, (share, *accs) in PAPER.items():
        print(f"| *{label}* | {share:.2f} | " + " | ".join(f"{m:.2f} ± {s:.2f}" for m, s in accs) + " |")
    all_skip = Genotype(space="nb201", version=space.version, choices=("skip_connect",) * 6)
    table = table_accuracy(space, all_skip)
    skip_accs = " | ".join(f"{table[d]:.2f}" for d in TABLE_DATASETS)
    print(f"| *all-skip cell, bundled table* | 1.00 | {skip_accs} |")
    print("| *table optimum* | - | " + " | ".join(f"{v:.2f}" for v in OPTIMUM) + " |")

    # the skip trajectory: mean skip share of the per-epoch derived cell over the seeds
    marks = sorted({1, *range(25, args.epochs + 1, 25), args.epochs})
    print("\nSkip share of the cell derived after epoch e (mean over seeds):\n")
    print("| strategy | " + " | ".join(f"e={e}" for e in marks) + " |")
    print("|---|" + "---|" * len(marks))
    for label in args.strategies:
        group = [r for r in rows if r["strategy"] == label and len(r["skip_share_by_epoch"]) >= args.epochs]
        if not group:
            continue
        vals = [statistics.fmean(r["skip_share_by_epoch"][e - 1] for r in group) for e in marks]
        print(f"| {label} | " + " | ".join("-" if math.isnan(v) else f"{v:.2f}" for v in vals) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=list(range(10)))
    parser.add_argument(
        "--strategies",
        type=lambda s: [x for x in s.split(",") if x],
        default=list(STRATEGIES),
        help=f"Comma-separated, of {', '.join(STRATEGIES)} (default: both).",
    )
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--arch-lr", type=float, default=3e-3)
    parser.add_argument("--C", type=int, default=8)
    parser.add_argument("--N", type=int, default=1)
    parser.add_argument("--results", type=Path, default=Path("runs/darts_skip_nb201.jsonl"))
    parser.add_argument("--report-only", action="store_true", help="Print from --results; run nothing.")
    parser.add_argument("--recompute", action="store_true", help="Ignore earlier records; run all.")
    parser.add_argument(
        "--code",
        type=lambda s: [x for x in s.split(",") if x],
        default=[],
        help="With --report-only: report the records of these code versions (comma-separated digests).",
    )
    args = parser.parse_args()
    unknown = [label for label in args.strategies if label not in STRATEGIES]
    if unknown:
        parser.error(f"unknown strategies {unknown}; known: {', '.join(STRATEGIES)}")
    torch.set_num_threads(1)
    file = RecordFile(args.results, code_version(*CODE), recompute=args.recompute)
    print(f"code version {file.code}", flush=True)
    report(reported(args, file), args)


if __name__ == "__main__":
    main()

"""DARTS vs PR-DARTS on the NAS-Bench-201 supernet: skip share and table accuracy, 3 seeds.

Issue 4's last "Must show": DARTS's tendency to favour skip connections on the NB201
supernet (skip share of its derived cell vs PR-DARTS's), with the bundled table's
accuracy of both derived cells over 3 seeds, next to the papers' numbers.

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
keeps the skip share of the cell derived after every epoch (the skip trajectory).

    python benchmarks/darts_skip_nb201.py                    # ~15 min on one thread
    python benchmarks/darts_skip_nb201.py --seeds 0 --epochs 5   # a quick look
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

from nasforge.genotype import Genotype
from nasforge.registry import get_registry
from nasforge_darts.table_compare import TABLE_DATASETS, compare_on_table, table_accuracy

STRATEGIES = {"darts": ("darts", {}), "prdarts[official-code]": ("prdarts", {"preset": "official-code"})}

#: Published NB201 numbers (CIFAR-10 search, test accuracy %, NB201 paper Table 5).
PAPER = {
    "DARTS-V1 and V2, NB201 paper (all-skip cell)": (1.00, (54.30, 0.00), (15.61, 0.00), (16.32, 0.00)),
}
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
    wanted = [run_settings(common, label, seed) for label in STRATEGIES for seed in args.seeds]
    for key in wanted:
        if args.report_only or file.has(key):
            continue
        (row,) = compare_on_table(
            seeds=(key["seed"],), strategies=((key["strategy"], key["options"]),), common=common
        )
        file.append(key, {**row.to_json(), "common": common})
        print(
            f"{key['label']} seed {key['seed']}: skip share {row.skip_share:.2f}, "
            f"cifar10 {row.accuracy['cifar10']:.2f}, {row.seconds:.0f} s, {row.genotype}",
            flush=True,
        )
    return file.records(wanted)


def mean_std(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    space = get_registry().get("space", "nb201")()
    print(f"\nSettings: {json.dumps(settings(args))}; seeds {args.seeds}\n")
    print("| strategy | seed | skip share | " + " | ".join(TABLE_DATASETS) + " | derived cell |")
    print("|---|---|---|" + "---|" * len(TABLE_DATASETS) + "---|")
    for r in rows:
        accs = " | ".join(f"{r['accuracy'][d]:.2f}" for d in TABLE_DATASETS)
        print(f"| {r['strategy']} | {r['seed']} | {r['skip_share']:.2f} | {accs} | `{r['genotype']}` |")

    print("\n| strategy | skip share of derived cell | " + " | ".join(TABLE_DATASETS) + " |")
    print("|---|---|" + "---|" * len(TABLE_DATASETS))
    for label in STRATEGIES:
        group = [r for r in rows if r["strategy"] == label]
        if not group:
            continue
        cells = [mean_std([r["skip_share"] for r in group])]
        cells += [mean_std([r["accuracy"][d] for r in group]) for d in TABLE_DATASETS]
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
    for label in STRATEGIES:
        group = [r for r in rows if r["strategy"] == label and len(r["skip_share_by_epoch"]) >= args.epochs]
        if not group:
            continue
        vals = [statistics.fmean(r["skip_share_by_epoch"][e - 1] for r in group) for e in marks]
        print(f"| {label} | " + " | ".join("-" if math.isnan(v) else f"{v:.2f}" for v in vals) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--arch-lr", type=float, default=3e-3)
    parser.add_argument("--C", type=int, default=8)
    parser.add_argument("--N", type=int, default=1)
    parser.add_argument("--results", type=Path, default=Path("runs/darts_skip_nb201.jsonl"))
    parser.add_argument("--report-only", action="store_true", help="Print from --results; run nothing.")
    parser.add_argument("--recompute", action="store_true", help="Ignore earlier records; run all.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = run(args, RecordFile(args.results, code_version(*CODE), recompute=args.recompute))
    report(rows, args)


if __name__ == "__main__":
    main()

"""Seed 001 chapter 4 on digits: does the widest, shallowest cell train faster?

DARTS_V2 (normal cell 3.5c, 3) and its connection variants 1..10 drawn as the thesis
describes (the authors' seeds); of those, the widest-shallowest and the
narrowest-deepest normal cells are trained from scratch beside DARTS_V2 with the
chapter's recipe (SGD, momentum 0.9, wd 3e-4, cosine, clip 5, batch 64, no
regularisation) on sklearn digits, DARTS evaluation network C=8, 5 cells, no auxiliary
head, for each seed. Everything runs through ``nasforge insight``'s pipeline, so the same
page (index.html), PNGs and report.json land in ``--out``.

Printed: each genotype's mean training loss per epoch over the seeds, the mean over
epochs (area under the curve) per seed, and the chapter's trend: in how many seeds the
widest-shallowest variant's training loss fell faster (smaller area) than the
narrowest-deepest one's.

    NASFORGE_THREADS=1 nice -n 5 python benchmarks/insight_convergence.py   # ~10 min, loaded core
    python benchmarks/insight_convergence.py --epochs 2 --seeds 0 --limit 600   # a quick look
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

import torch

from nasforge import get_registry
from nasforge.kernel.datasets import load_dataset
from nasforge_insight.convergence import ProbeSettings
from nasforge_insight.published_cells import DARTS_V2
from nasforge_insight.report import InsightSettings, run_insight
from nasforge_insight.subjects import extreme_variants, resolve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.025)
    parser.add_argument("--variants", type=int, default=10)
    parser.add_argument("--limit", type=int, default=None, help="use at most this many digits")
    parser.add_argument("--C", type=int, default=8)
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--grid", type=int, default=11)
    parser.add_argument("--out", type=Path, default=Path("runs/insight-convergence"))
    parser.add_argument("--plot", type=Path, default=None, help="also copy the convergence PNG here")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("NASFORGE_THREADS", "1")))

    registry = get_registry()
    base = resolve(DARTS_V2, registry, label="DARTS_V2")
    widest, deepest = extreme_variants(base, args.variants)
    settings = InsightSettings(
        probe=ProbeSettings(epochs=args.epochs, lr=args.lr, limit=args.limit),
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        build={"C": args.C, "layers": args.layers, "auxiliary": False},
        landscape_steps=args.grid,
    )
    start = time.perf_counter()
    report = run_insight([base, widest, deepest], load_dataset("digits"), settings, args.out)
    seconds = time.perf_counter() - start

    print(
        f"digits, DARTS network C={args.C}, {args.layers} cells, lr {args.lr}, {args.epochs} epochs, "
        f"seeds {args.seeds}; variants 1..{args.variants} of DARTS_V2 ({seconds:.0f} s)"
    )
    print()
    print(f"{'genotype':<38} {'normal cell':>11}  mean training loss per epoch (over seeds)")
    for r in report.results:
        per_epoch = [sum(c.epoch_loss[e] for c in r.curves) / len(r.curves) for e in range(args.epochs)]
        print(
            f"{r.subject.label:<38} {r.subject.cells[0].shape().label():>11}  "
            + " ".join(f"{v:.3f}" for v in per_epoch)
        )
    print()
    print(
        f"{'genotype':<38} {'AUC per seed':<28} {'mean +- sd':>16} {'held-out acc %':>15} "
        f"{'grad var (trained)':>19}"
    )
    for r in report.results:
        s = r.summary
        assert s is not None and r.variance_trained is not None
        per_seed = " ".join(f"{c.auc:.4f}" for c in r.curves)
        print(
            f"{r.subject.label:<38} {per_seed:<28} {s.auc:>8.4f} +- {s.auc_std:.4f} "
            f"{100 * s.test_accuracy:>15.1f} {r.variance_trained.value:>19.4g}"
        )
    wide, deep = report.results[1], report.results[2]
    faster = sum(a.auc < b.auc for a, b in zip(wide.curves, deep.curves, strict=True))
    print()
    print(
        f"trend (chapter 4): the widest-shallowest variant's training loss fell faster (smaller mean "
        f"over epochs) than the narrowest-deepest one's in {faster}/{len(wide.curves)} seeds; "
        f"epoch-1 loss {wide.summary.first_epoch:.3f} vs {deep.summary.first_epoch:.3f}"
    )  # type: ignore[union-attr]
    if args.plot is not None and report.convergence_png is not None:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report.convergence_png, args.plot)
        print(f"convergence plot copied to {args.plot}")
    print(f"page: {report.html}; figures: {', '.join(str(p) for p in report.figure_paths)}")


if __name__ == "__main__":
    main()

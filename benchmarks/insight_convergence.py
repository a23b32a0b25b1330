"""Shu et al. (ICLR 2020; chapter 4 of Shu's thesis, NUS 2022): do wider, shallower cells converge faster?

Two studies, both through ``nasforge insight``'s pipeline (the same page, PNGs and
report.json land in ``--out``), each network trained from scratch with the chapter's
recipe (SGD, momentum 0.9, wd 3e-4, cosine, clip 5, batch 64, no regularisation), DARTS
evaluation network C=8, 5 cells, no auxiliary head:

- ``--study extremes`` (the default; digits): DARTS_V2 and, of its connection variants
  1..10 drawn as the thesis describes (the authors' seeds), the widest-shallowest and the
  narrowest-deepest. Printed: training loss per epoch, its mean over epochs per seed, and
  in how many seeds the widest variant's fell faster than the deepest one's.
- ``--study all`` (``--dataset mnist1d``): all five published cells of Fig. 4.1 with all
  their connection variants 1..10 (DARTS_V2 and SNAS_MILD in the DARTS space; NASNet,
  AmoebaNet and ENAS, five intermediate nodes and the 7x7 / 7x1-1x7 convolutions, in the
  ``nasnet-cells`` space: the same evaluation network with their own concat); the trend
  statistic over all of them: the rank correlation of the normal cell's width (and depth)
  with the mean held-out loss over the epochs (what the thesis plots) and with the mean
  training loss, with a bootstrap 95 % interval over genotypes; per family, the same
  within the family.

    NASFORGE_THREADS=1 nice -n 5 python benchmarks/insight_convergence.py   # digits, ~10 min
    python benchmarks/insight_convergence.py --epochs 2 --seeds 0 --limit 600   # a quick look
    nice -n 15 python benchmarks/insight_convergence.py --study all --dataset mnist1d --seeds 0,1,2,3,4 \\
        --grid 5 --samples 128 --out runs/insight-mnist1d --trend-plot docs/images/insight_mnist1d.png

``--trend-plot PNG`` draws the trend study (width of the normal cell against the mean
held-out loss, one point per genotype with its spread over seeds, and the held-out loss
per epoch coloured by width); ``--redraw REPORT.json --trend-plot PNG`` draws it again
from a finished study's report.json, without training.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import torch

from nasforge import get_registry
from nasforge.kernel.datasets import load_dataset
from nasforge_insight.convergence import ProbeSettings
from nasforge_insight.published_cells import DARTS_V2, PUBLISHED
from nasforge_insight.report import InsightSettings, Report, run_insight
from nasforge_insight.subjects import Subject, extreme_variants, resolve, with_variants
from nasforge_insight.trend import trend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", choices=("extremes", "all"), default="extremes")
    parser.add_argument("--dataset", default="digits")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.025)
    parser.add_argument("--variants", type=int, default=10)
    parser.add_argument("--limit", type=int, default=None, help="use at most this many samples")
    parser.add_argument("--C", type=int, default=8)
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--grid", type=int, default=11)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path("runs/insight-convergence"))
    parser.add_argument("--plot", type=Path, default=None, help="also copy the convergence PNG here")
    parser.add_argument("--trend-plot", type=Path, default=None, help="draw the width trend here (PNG)")
    parser.add_argument("--redraw", type=Path, default=None, help="a finished study's report.json: only draw")
    args = parser.parse_args()
    if args.redraw is not None:
        if args.trend_plot is None:
            parser.error("--redraw needs --trend-plot")
        trend_figure(json.loads(args.redraw.read_text()), args.trend_plot)
        return
    torch.set_num_threads(int(os.environ.get("NASFORGE_THREADS", "1")))

    registry = get_registry()
    if args.study == "extremes":
        base = resolve(DARTS_V2, registry, label="DARTS_V2")
        subjects = [base, *extreme_variants(base, args.variants)]
    else:
        subjects = []
        for name in PUBLISHED:  # all five, each in the space that holds it
            base = resolve(PUBLISHED[name], registry, label=name)
            subjects += [base, *with_variants(base, args.variants)]
    settings = InsightSettings(
        probe=ProbeSettings(epochs=args.epochs, lr=args.lr, limit=args.limit),
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        build={"C": args.C, "layers": args.layers, "auxiliary": False},
        samples=args.samples,
        landscape_steps=args.grid,
    )
    start = time.perf_counter()
    report = run_insight(subjects, load_dataset(args.dataset, registry=registry), settings, args.out)
    seconds = time.perf_counter() - start
    print(
        f"{args.dataset}, DARTS network C={args.C}, {args.layers} cells, lr {args.lr}, {args.epochs} epochs, "
        f"seeds {args.seeds}; {len(subjects)} genotypes ({seconds:.0f} s)"
    )
    if args.study == "extremes":
        extremes(report, args)
    else:
        everything(report, subjects, args)
    for caution in report.cautions:
        print(f"caution: {caution}")
    if args.plot is not None and report.convergence_png is not None:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report.convergence_png, args.plot)
        print(f"convergence plot copied to {args.plot}")
    if args.trend_plot is not None and report.json is not None:
        trend_figure(json.loads(Path(report.json).read_text()), args.trend_plot)
    print(f"page: {report.html}")


def extremes(report: Report, args: argparse.Namespace) -> None:
    print(f"\n{'genotype':<38} {'normal cell':>11}  mean training loss per epoch (over seeds)")
    for r in report.results:
        per_epoch = [sum(c.epoch_loss[e] for c in r.curves) / len(r.curves) for e in range(args.epochs)]
        print(
            f"{r.subject.label:<38} {r.subject.cells[0].shape().label():>11}  "
            + " ".join(f"{v:.3f}" for v in per_epoch)
        )
    print(
        f"\n{'genotype':<38} {'AUC per seed':<28} {'mean +- sd':>16} {'held-out acc %':>15} "
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
    assert wide.summary is not None and deep.summary is not None
    print(
        f"\ntrend (chapter 4): the widest-shallowest variant's training loss fell faster (smaller mean "
        f"over epochs) than the narrowest-deepest one's in {faster}/{len(wide.curves)} seeds; "
        f"epoch-1 loss {wide.summary.first_epoch:.3f} vs {deep.summary.first_epoch:.3f}"
    )


def everything(report: Report, subjects: list[Subject], args: argparse.Namespace) -> None:
    print(
        f"\n{'genotype':<24} {'normal':>8} {'params':>8} {'held-out loss/epoch (mean)':>28} "
        f"{'± sd seeds':>10} {'train loss/epoch':>17} {'held-out acc %':>15}"
    )
    for r in report.results:
        s = r.summary
        assert s is not None
        print(
            f"{r.subject.label:<24} {r.subject.cells[0].shape().label():>8} {r.parameters:>8,} "
            f"{s.held_out_auc:>28.4f} {s.held_out_auc_std:>10.4f} {s.auc:>17.4f} "
            f"{100 * s.test_accuracy:>15.1f}"
        )
    print("\nTrend over all trained genotypes (bootstrap 95 % interval over genotypes):")
    for t in report.trends:
        print(f"  {t.describe()}")
    print("Within each family:")
    for name in PUBLISHED:
        family = [
            r for r in report.results if r.subject.label.split(" ")[0] == name and r.summary is not None
        ]
        found = trend(
            [(r.subject.cells[0].shape().width, r.summary.held_out_auc) for r in family],
            x="width",
            y="mean held-out loss",
        )
        if found is not None:
            print(f"  {name}: {found.describe()}")
    print("(wider converging faster is a negative correlation with the mean loss)")
    accuracies = [r.summary.test_accuracy for r in report.results if r.summary is not None]
    print(
        f"Held-out accuracy over the {len(accuracies)} genotypes: median "
        f"{100 * statistics.median(accuracies):.1f} %, "
        f"range {100 * min(accuracies):.1f}-{100 * max(accuracies):.1f} %"
    )


def trend_figure(report: dict, path: Path) -> None:
    """Width of the normal cell against the mean held-out loss (one point per genotype,
    bars: sd over seeds), and the held-out loss per epoch (mean over seeds) coloured by
    width: the trend the statistic summarises, drawn from a study's report.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for g in report["genotypes"]:
        normal = next(c for c in g["cells"] if c["cell"] == "normal")
        curves = g["curves"]
        epochs = len(curves[0]["test_loss"])
        per_epoch = [statistics.fmean(c["test_loss"][e] for c in curves) for e in range(epochs)]
        auc = [c["held_out_auc"] for c in curves]
        rows.append((normal["width"], statistics.fmean(auc), statistics.pstdev(auc), per_epoch, g["label"]))
    stat = next(t for t in report["trends"] if "width" in t["x"] and "held-out" in t["y"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    families = sorted({label.split(" ")[0] for *_, label in rows})
    for k, family in enumerate(families):
        mine = [r for r in rows if r[4].split(" ")[0] == family]
        left.errorbar(
            [r[0] + 0.04 * (k - (len(families) - 1) / 2) for r in mine],
            [r[1] for r in mine],
            yerr=[r[2] for r in mine],
            fmt="o",
            ms=4,
            capsize=2,
            label=f"{family} + connection variants",
        )
    left.set(
        xlabel="width of the normal cell",
        ylabel="mean held-out loss over epochs",
        title=f"Spearman {stat['rho']:+.2f} [{stat['low']:+.2f}, {stat['high']:+.2f}] "
        f"over {stat['n']} genotypes",
    )
    left.title.set_fontsize(9)
    left.legend(fontsize=7)
    left.grid(alpha=0.3)
    widths = [r[0] for r in rows]
    norm = matplotlib.colors.Normalize(min(widths), max(widths))
    for width, _, _, per_epoch, _ in rows:
        right.plot(range(1, len(per_epoch) + 1), per_epoch, color=plt.cm.viridis(norm(width)), lw=1.2)
    right.set(
        xlabel="epoch",
        ylabel="held-out loss (mean over seeds)",
        yscale="log",
        title="held-out loss per epoch",
    )
    right.title.set_fontsize(9)
    right.grid(alpha=0.3)
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=right, label="width of the normal cell")
    settings = report["settings"]
    build, probe = settings["build"], settings["probe"]
    fig.suptitle(
        f"{report['dataset']}: DARTS network C={build['C']}, {build['layers']} cells, "
        f"{probe['epochs']} epochs, {len(settings['seeds'])} seeds",
        fontsize=10,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"trend drawn to {path}")


if __name__ == "__main__":
    main()

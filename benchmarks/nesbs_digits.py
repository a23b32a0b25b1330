"""NESBS on sklearn digits with a small NAS-Bench-201-style supernet, against same-size baselines.

For each seed: digits split 70/30 into search data and a held-out test set; NESBS
(thesis defaults: supernet 50 epochs of uniform single paths, posterior 20 epochs, T = 5
candidates of n = 3 by SVGD-RD with delta = 0, selection by the supernet NLL of the
averaged probabilities) on the search data, on the NB201 supernet at C = 8, N = 1. Then,
from the same trained supernet: NESBS with MC sampling, a random ensemble (3 uniformly
drawn architectures), and the top-3 single architectures by supernet NLL among 100
uniformly drawn ones. Every member of every ensemble is trained from scratch on the
search data by the plugin's own trainer (``nasforge_nesbs.member_training``: SGD,
momentum 0.9, cosine lr from 0.05, ``--epochs``), its test predictions kept; an ensemble
predicts the mean of its members' softmax. A member shared by two ensembles is trained
once (same seed), so the comparison is paired.

Printed: test error (%) and NLL per method and seed, mean and std over seeds, whether
NESBS beat each baseline, and the thesis's Table 5.1 (NB201 at GPU scale) beside it.

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/nesbs_digits.py          # 3 seeds, ~10-15 min
    python benchmarks/nesbs_digits.py --seeds 0 --epochs 5 --quick          # a smoke run, ~1 min
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from nasforge.api import load_space
from nasforge.datasets import load_digits, network_options
from nasforge.seeding import seeded_build
from nasforge.supernet import as_supernet, supernet_option_names
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding
from nasforge_nesbs.estimation import combine, prob_scores
from nasforge_nesbs.member_training import MemberTraining, predict_logits, train_member
from nasforge_nesbs.search import run_nesbs, select

THESIS = {  # Table 5.1, NB201, n = 3, test error %, mean over 3 trials (C10 / C100 / IN16-120)
    "NESBS (SVGD-RD)": (5.92, 25.00, 52.68),
    "NESBS (MC Sampling)": (5.76, 25.39, 53.47),
    "NES-RS": (5.83, 25.58, 54.34),
    "DeepEns": (5.75, 25.27, 54.70),
}
METHODS = ("nesbs-svgd", "nesbs-svgd members", "nesbs-mc", "random", "top-k", "top-k-budget")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--epochs", type=int, default=15, help="training epochs of every member")
    p.add_argument("--pool", type=int, default=100, help="uniform architectures the top-k baseline ranks")
    p.add_argument("--C", type=int, default=8)
    p.add_argument("--N", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="short supernet/posterior/SVGD (smoke run)")
    p.add_argument("--json", type=Path, default=None, help="also write every figure here")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    space = load_space("nb201")
    rows = [run_seed(space, seed, args) for seed in args.seeds]
    report(rows, args)
    if args.json is not None:
        args.json.write_text(
            json.dumps({"args": vars(args) | {"json": str(args.json)}, "seeds": rows}, indent=1)
        )
    return 0


def run_seed(space, seed: int, args) -> dict:
    t0 = time.perf_counter()
    search, test = load_digits().split(0.7, seed=seed)
    extra = {"supernet_epochs": 5, "posterior_epochs": 3, "svgd_steps": 200} if args.quick else {}
    config = NesbsConfig(seed=seed, supernet={"C": args.C, "N": args.N}, **extra)
    opts = dict(config.supernet)
    opts |= network_options(search.input_shape, search.num_classes, accepted=supernet_option_names(space))
    supernet = seeded_build(lambda: space.supernet(**opts), seed)
    encoding = ArchEncoding(as_supernet(supernet, by="benchmark"))
    run = run_nesbs(supernet, encoding, search, config)
    search_seconds = time.perf_counter() - t0
    predictor = run.predictor
    gen = torch.Generator().manual_seed(10_000 + seed)
    mc_config = NesbsConfig(seed=seed, sampler="mc", supernet=config.supernet, **extra)
    mc_cands, mc_best = select(predictor, run.posterior, mc_config, gen)
    random_members = [encoding.uniform(gen) for _ in range(config.ensemble_size)]
    pool = list(dict.fromkeys(encoding.uniform(gen) for _ in range(args.pool)))
    ranked = sorted(pool, key=lambda a: predictor.member_scores(a)["nll"])
    budget = config.iterations * config.ensemble_size  # NESBS's evaluation budget (A16)
    ranked_budget = sorted(pool[:budget], key=lambda a: predictor.member_scores(a)["nll"])
    ensembles = {
        "nesbs-svgd": list(run.members),
        "nesbs-mc": list(mc_cands[mc_best].members),
        "random": random_members,
        "top-k": ranked[: config.ensemble_size],
        "top-k-budget": ranked_budget[: config.ensemble_size],
    }
    recipe = MemberTraining(epochs=args.epochs)
    trained: dict[tuple[str, int], torch.Tensor] = {}

    def test_logits(a, occurrence: int) -> torch.Tensor:
        text = space.format(encoding.genotype(a))
        if (text, occurrence) not in trained:
            member_seed = (
                seed * 100_003 + int(hashlib.sha256(text.encode()).hexdigest()[:6], 16) + 7919 * occurrence
            )
            model = train_member(
                space,
                encoding.genotype(a),
                search,
                seed=member_seed,
                recipe=recipe,
                build_options={"C": args.C, "N": args.N},
            )
            trained[(text, occurrence)] = predict_logits(model, test.x)
        return trained[(text, occurrence)]

    out: dict = {"seed": seed, "search_seconds": round(search_seconds, 1), "methods": {}}
    for name, members in ensembles.items():
        logits = [test_logits(a, members[:i].count(a)) for i, a in enumerate(members)]
        ens = prob_scores(combine(logits), test.y)
        singles = [prob_scores(torch.softmax(lg.double(), -1), test.y) for lg in logits]
        out["methods"][name] = {
            "error": ens["error"],
            "nll": ens["nll"],
            "member_errors": [s["error"] for s in singles],
            "members": [space.format(encoding.genotype(a)) for a in members],
            "supernet_nll": predictor.ensemble_scores(members)["nll"],
            "supernet_error": predictor.ensemble_scores(members)["error"],
        }
        if name == "nesbs-svgd":
            out["methods"]["nesbs-svgd members"] = {
                "error": statistics.fmean(s["error"] for s in singles),
                "nll": statistics.fmean(s["nll"] for s in singles),
            }
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(
        f"seed {seed}: "
        + ", ".join(f"{k} {v['error']:.2f}%" for k, v in out["methods"].items())
        + f"  ({out['seconds']:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    return out


def report(rows: list[dict], args) -> None:
    seeds = [r["seed"] for r in rows]
    print(
        f"\nNESBS on sklearn digits, NB201 supernet C={args.C} N={args.N}, n=3, members trained "
        f"{args.epochs} epochs from scratch; test error % (NLL), seeds {seeds}"
    )
    head = f"{'method':<28}" + "".join(f"{'seed ' + str(s):>16}" for s in seeds) + f"{'mean ± std':>20}"
    print(head)
    print("-" * len(head))
    labels = {
        "nesbs-svgd": "NESBS (SVGD-RD) ensemble",
        "nesbs-svgd members": "  its members, mean",
        "nesbs-mc": "NESBS (MC) ensemble",
        "random": "random ensemble",
        "top-k": f"top-3 by supernet NLL/{args.pool}",
        "top-k-budget": "top-3 by supernet NLL/T*n",
    }
    for m in METHODS:
        errs = [r["methods"][m]["error"] for r in rows]
        nlls = [r["methods"][m]["nll"] for r in rows]
        sd = statistics.stdev(errs) if len(errs) > 1 else 0.0
        cells = "".join(f"{e:>9.2f} ({n:.3f})" for e, n in zip(errs, nlls, strict=True))
        print(f"{labels[m]:<28}{cells}{statistics.fmean(errs):>12.2f} ± {sd:.2f}")
    print("\nWhat the selection optimises, estimated with supernet weights on the selection split")
    print("(the thesis's Fig. 5.3 level): ensemble NLL / error %, mean over seeds")
    for m in ("nesbs-svgd", "nesbs-mc", "random", "top-k", "top-k-budget"):
        nll = statistics.fmean(r["methods"][m]["supernet_nll"] for r in rows)
        err = statistics.fmean(r["methods"][m].get("supernet_error", float("nan")) for r in rows)
        print(f"{labels[m]:<28}{nll:>9.3f} / {err:.2f}")
    print()
    for other in ("nesbs-svgd members", "random", "top-k", "top-k-budget", "nesbs-mc"):
        wins = sum(r["methods"]["nesbs-svgd"]["error"] < r["methods"][other]["error"] for r in rows)
        ties = sum(r["methods"]["nesbs-svgd"]["error"] == r["methods"][other]["error"] for r in rows)
        nll_wins = sum(r["methods"]["nesbs-svgd"]["nll"] < r["methods"][other]["nll"] for r in rows)
        print(
            f"NESBS (SVGD-RD) below {labels[other].strip():<24}: error {wins}/{len(rows)} seeds "
            f"({ties} ties), NLL {nll_wins}/{len(rows)}"
        )
    print("\nThesis Table 5.1 (NAS-Bench-201, members trained 200 epochs at GPU scale), test error %:")
    print(f"{'':<28}{'CIFAR-10':>10}{'CIFAR-100':>11}{'IN16-120':>10}")
    for name, (a, b, c) in THESIS.items():
        print(f"{name:<28}{a:>10.2f}{b:>11.2f}{c:>10.2f}")
    print(
        f"\nsearch seconds per seed: {[r['search_seconds'] for r in rows]}, "
        f"total per seed: {[r['seconds'] for r in rows]}"
    )


if __name__ == "__main__":
    raise SystemExit(main())

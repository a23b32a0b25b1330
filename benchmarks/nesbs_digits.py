"""NESBS on sklearn digits with a small NAS-Bench-201-style supernet, against same-size baselines.

For each seed: digits split into search data and a held-out test set (``--search-share``);
NESBS (thesis defaults: supernet 50 epochs of uniform single paths, posterior 20 epochs,
T = 5 candidates of n = 3 by SVGD-RD with delta = 0 (``--delta``: another, or "auto", our
grid of deltas, -0.75 to 1), selection by the supernet NLL of the
averaged probabilities) on the search data, on the NB201 supernet at ``--C``, ``--N``.
Then, from the same trained supernet: NESBS with MC sampling, a random ensemble (3
uniformly drawn architectures), the top-3 single architectures by supernet NLL among 100
uniformly drawn ones (and among the first T*n of them, times the deltas tried: NESBS's
evaluation budget), and
DeepEns (the top-1 by supernet NLL, three times with different initial weights). NES-RS
(Zaidi et al. 2021, the thesis's baseline): ``--nes-rs-pool`` uniform architectures
trained on the supernet's 70 % split, the ensemble built by forward selection (greedy,
distinct members) on the NLL of the 30 % selection split, as NESBS selects.

Every member of every ensemble is trained from scratch on the search data by the plugin's
own trainer (``nasforge_nesbs.member_training``: SGD, momentum 0.9, cosine lr from 0.05,
``--epochs``), its test predictions kept; an ensemble predicts the mean of its members'
softmax. A member shared by two ensembles is trained once (same seed), so the comparison
is paired.

Presets (``--preset``; an explicit option wins):

- ``default``: C = 8, 15 epochs, 70 % search / 30 % test (540 test images). Members reach
  about 1 % error, so methods differ by 1-3 test images: not resolvable.
- ``hard``: C = 4, 15 epochs (the same recipe, members trained to their plateau), 50 %
  search / 50 % test (899 test images). Chosen without the test set by ``--calibrate``:
  12 uniform architectures trained on the search data's 70 % split, their errors on the
  30 % selection split; the criterion is that one test image is under 0.2 of the spread
  of member errors (robust std, IQR / 1.349), so differences between methods are many
  images, not one or two.

Printed: test error (%) and NLL per method and seed, mean and std over seeds, whether
NESBS beat each baseline, and the thesis's Table 5.1 (NB201 at GPU scale) beside it.

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/nesbs_digits.py --preset hard   # 3 seeds
    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/nesbs_digits.py                 # default preset
    OMP_NUM_THREADS=1 python benchmarks/nesbs_digits.py --preset hard --delta auto  # our delta grid
    python benchmarks/nesbs_digits.py --preset hard --calibrate                   # the criterion
    python benchmarks/nesbs_digits.py --seeds 0 --epochs 5 --quick                # a smoke run, ~1 min
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

from nasforge.api import load_space
from nasforge.kernel.datasets import network_options
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet, supernet_option_names
from nasforge.run.builtin_datasets import load_digits
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
METHODS = (
    "nesbs-svgd",
    "nesbs-svgd members",
    "nesbs-mc",
    "nes-rs",
    "deepens",
    "random",
    "top-k",
    "top-k-budget",
)
#: Settings of each preset; an option given on the command line wins.
PRESETS: dict[str, dict[str, float | int]] = {
    "default": {"C": 8, "N": 1, "epochs": 15, "search_share": 0.7},
    "hard": {"C": 4, "N": 1, "epochs": 15, "search_share": 0.5},
}
#: The calibration criterion: one test image under this share of the member-error spread.
CRITERION = 0.2


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="default")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--epochs", type=int, default=None, help="training epochs of every member")
    p.add_argument(
        "--iterations",
        type=int,
        default=5,
        help="T, the candidate ensembles NESBS samples and selects from by supernet NLL (thesis: 5)",
    )
    p.add_argument(
        "--delta",
        type=_delta,
        default=0.0,
        help='SVGD-RD diversity delta (thesis range [-2, 1]; 0 is plain SVGD), or "auto": T candidates '
        "at each delta of our grid (the thesis does not say which delta its tables used), the best by "
        "selection-split NLL kept",
    )
    p.add_argument("--pool", type=int, default=100, help="uniform architectures the top-k baseline ranks")
    p.add_argument("--nes-rs-pool", type=int, default=10, help="architectures NES-RS trains and selects from")
    p.add_argument("--C", type=int, default=None)
    p.add_argument("--N", type=int, default=None)
    p.add_argument("--search-share", type=float, default=None, help="share of digits searched on; rest: test")
    p.add_argument("--quick", action="store_true", help="short supernet/posterior/SVGD (smoke run)")
    p.add_argument("--calibrate", action="store_true", help="print the preset's criterion (no test data)")
    p.add_argument("--calibrate-archs", type=int, default=12)
    p.add_argument("--json", type=Path, default=None, help="also write every figure here")
    args = p.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if not 0.1 <= args.search_share <= 0.9:
        print(f"error: --search-share must be in [0.1, 0.9], got {args.search_share}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    space = load_space("nb201")
    if args.calibrate:
        rows = [calibrate(space, seed, args) for seed in args.seeds]
        result: dict = {"calibration": rows}
    else:
        rows = [run_seed(space, seed, args) for seed in args.seeds]
        report(rows, args)
        result = {"seeds": rows}
    if args.json is not None:
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, **result}, indent=1))
        tmp.replace(args.json)
    return 0


def _delta(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a number or "auto", got {text!r}') from None


def calibrate(space, seed: int, args) -> dict:
    """The preset's criterion from the search data alone (the test set is never touched).

    Uniform architectures are trained with the members' recipe on the 70 % split NESBS
    trains its supernet on and scored on the 30 % selection split. The spread of their
    errors (IQR / 1.349, robust to an architecture that does not learn at all) is what
    separates ensembles; one test image is ``100 / n_test`` %.
    """
    t0 = time.perf_counter()
    search, test = load_digits().split(args.search_share, seed=seed)
    train, held = search.split(NesbsConfig().split, seed=seed)
    gen = torch.Generator().manual_seed(30_000 + seed)
    probe = seeded_build(lambda: space.supernet(C=args.C, N=args.N, num_classes=10, in_channels=1), seed)
    encoding = ArchEncoding(as_supernet(probe, by="benchmark"))
    recipe = MemberTraining(epochs=args.epochs)
    errors = []
    for i in range(args.calibrate_archs):
        g = encoding.genotype(encoding.uniform(gen))
        model = train_member(
            space, g, train, seed=seed * 1000 + i, recipe=recipe, build_options={"C": args.C, "N": args.N}
        )
        errors.append(100.0 * float((predict_logits(model, held.x).argmax(1) != held.y).double().mean()))
    q = statistics.quantiles(errors, n=4)
    spread = (q[2] - q[0]) / 1.349
    image = 100.0 / len(test)
    row = {
        "seed": seed,
        "n_test": len(test),
        "one_test_image": image,
        "member_errors": sorted(round(e, 2) for e in errors),
        "median": statistics.median(errors),
        "spread": spread,
        "ratio": image / spread if spread > 0 else float("inf"),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    verdict = "meets" if row["ratio"] < CRITERION else "fails"
    print(
        f"{args.preset} (C={args.C} N={args.N}, {args.epochs} epochs, search {args.search_share:.0%}) "
        f"seed {seed}: member errors on the selection split {row['member_errors']}, median "
        f"{row['median']:.2f} %, spread {spread:.2f} %; one test image = {image:.3f} % "
        f"= {row['ratio']:.2f} of the spread: {verdict} the criterion (< {CRITERION}) "
        f"({row['seconds']:.0f} s)",
        flush=True,
    )
    return row


def forward_select(logits: list[torch.Tensor], y: torch.Tensor, size: int) -> list[int]:
    """NES's ForwardSelect: add, one at a time, the pool member that most lowers the
    ensemble's NLL on ``y`` (distinct members; ties to the lower index)."""
    chosen: list[int] = []
    for _ in range(min(size, len(logits))):
        rest = [i for i in range(len(logits)) if i not in chosen]
        best = min(rest, key=lambda i: (prob_scores(combine([logits[j] for j in [*chosen, i]]), y)["nll"], i))
        chosen.append(best)
    return chosen


def run_seed(space, seed: int, args) -> dict:
    t0 = time.perf_counter()
    search, test = load_digits().split(args.search_share, seed=seed)
    extra: dict = {"supernet_epochs": 5, "posterior_epochs": 3, "svgd_steps": 200} if args.quick else {}
    extra["iterations"] = args.iterations
    config = NesbsConfig(delta=args.delta, seed=seed, supernet={"C": args.C, "N": args.N}, **extra)
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
    # NESBS's evaluation budget (distinct architectures scored): every candidate's members, at
    # every delta it tried
    budget = config.iterations * config.ensemble_size * len(config.deltas())
    ranked_budget = sorted(pool[:budget], key=lambda a: predictor.member_scores(a)["nll"])
    recipe = MemberTraining(epochs=args.epochs)
    build = {"C": args.C, "N": args.N}

    # NES-RS: its own generator, so the other methods' draws do not depend on it.
    t_rs = time.perf_counter()
    rs_gen = torch.Generator().manual_seed(20_000 + seed)
    rs_train, rs_held = search.split(config.split, seed=seed)  # NESBS's own split
    rs_pool = list(dict.fromkeys(encoding.uniform(rs_gen) for _ in range(args.nes_rs_pool)))
    rs_logits = [
        predict_logits(
            train_member(
                space,
                encoding.genotype(a),
                rs_train,
                seed=seed * 1000 + i,
                recipe=recipe,
                build_options=build,
            ),
            rs_held.x,
        )
        for i, a in enumerate(rs_pool)
    ]
    rs_members = [rs_pool[i] for i in forward_select(rs_logits, rs_held.y, config.ensemble_size)]
    nes_rs_seconds = time.perf_counter() - t_rs

    ensembles = {
        "nesbs-svgd": list(run.members),
        "nesbs-mc": list(mc_cands[mc_best].members),
        "nes-rs": rs_members,
        "deepens": [ranked[0]] * config.ensemble_size,
        "random": random_members,
        "top-k": ranked[: config.ensemble_size],
        "top-k-budget": ranked_budget[: config.ensemble_size],
    }
    trained: dict[tuple[str, int], torch.Tensor] = {}

    def test_logits(a, occurrence: int) -> torch.Tensor:
        text = space.format(encoding.genotype(a))
        if (text, occurrence) not in trained:
            member_seed = (
                seed * 100_003 + int(hashlib.sha256(text.encode()).hexdigest()[:6], 16) + 7919 * occurrence
            )
            model = train_member(
                space, encoding.genotype(a), search, seed=member_seed, recipe=recipe, build_options=build
            )
            trained[(text, occurrence)] = predict_logits(model, test.x)
        return trained[(text, occurrence)]

    out: dict = {
        "seed": seed,
        "n_test": len(test),
        "search_seconds": round(search_seconds, 1),
        "nes_rs_seconds": round(nes_rs_seconds, 1),
        "methods": {},
    }
    for name, members in ensembles.items():
        logits = [test_logits(a, members[:i].count(a)) for i, a in enumerate(members)]
        probs = combine(logits)
        ens = prob_scores(probs, test.y)
        singles = [prob_scores(torch.softmax(lg.double(), -1), test.y) for lg in logits]
        out["methods"][name] = {
            "error": ens["error"],
            "nll": ens["nll"],
            "wrong": torch.nonzero(probs.argmax(-1) != test.y).flatten().tolist(),
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


def discordant(rows: list[dict], a: str, b: str) -> tuple[int, int]:
    """Test images (pooled over seeds) that ``a`` classifies right and ``b`` wrong, and the reverse."""
    only_a = only_b = 0
    for r in rows:
        wrong_a, wrong_b = set(r["methods"][a]["wrong"]), set(r["methods"][b]["wrong"])
        only_a += len(wrong_b - wrong_a)
        only_b += len(wrong_a - wrong_b)
    return only_a, only_b


def mcnemar(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: under no difference, b of the b + c discordant
    images is Binomial(b + c, 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def report(rows: list[dict], args) -> None:
    seeds = [r["seed"] for r in rows]
    print(
        f"\nNESBS on sklearn digits (preset {args.preset}), NB201 supernet C={args.C} N={args.N}, "
        f"n=3, T={args.iterations}, delta {args.delta}, "
        f"members trained {args.epochs} epochs from scratch on {args.search_share:.0%} of digits; "
        f"test error % (NLL) on {rows[0]['n_test']} test images (one image = "
        f"{100 / rows[0]['n_test']:.2f} %), seeds {seeds}"
    )
    head = f"{'method':<28}" + "".join(f"{'seed ' + str(s):>16}" for s in seeds) + f"{'mean ± std':>20}"
    print(head)
    print("-" * len(head))
    labels = {
        "nesbs-svgd": "NESBS (SVGD-RD) ensemble",
        "nesbs-svgd members": "  its members, mean",
        "nesbs-mc": "NESBS (MC) ensemble",
        "nes-rs": f"NES-RS ({args.nes_rs_pool} trained)",
        "deepens": "DeepEns (top-1 x 3 inits)",
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
    for m in ("nesbs-svgd", "nesbs-mc", "nes-rs", "deepens", "random", "top-k", "top-k-budget"):
        nll = statistics.fmean(r["methods"][m]["supernet_nll"] for r in rows)
        err = statistics.fmean(r["methods"][m].get("supernet_error", float("nan")) for r in rows)
        print(f"{labels[m]:<28}{nll:>9.3f} / {err:.2f}")
    print()
    for other in ("nesbs-svgd members", "random", "top-k", "top-k-budget", "nesbs-mc", "nes-rs", "deepens"):
        wins = sum(r["methods"]["nesbs-svgd"]["error"] < r["methods"][other]["error"] for r in rows)
        ties = sum(r["methods"]["nesbs-svgd"]["error"] == r["methods"][other]["error"] for r in rows)
        nll_wins = sum(r["methods"]["nesbs-svgd"]["nll"] < r["methods"][other]["nll"] for r in rows)
        paired = ""
        if other != "nesbs-svgd members":
            b, c = discordant(rows, "nesbs-svgd", other)
            paired = f"; images only NESBS gets right {b}, only the other {c}, p = {mcnemar(b, c):.2f}"
        print(
            f"NESBS (SVGD-RD) below {labels[other].strip():<24}: error {wins}/{len(rows)} seeds "
            f"({ties} ties), NLL {nll_wins}/{len(rows)}{paired}"
        )
    print(
        "(p: exact two-sided McNemar test on the test images one method of the pair gets right and "
        "the other wrong, pooled over seeds; p > 0.05: the test set cannot tell them apart)"
    )
    print("\nThesis Table 5.1 (NAS-Bench-201, members trained 200 epochs at GPU scale), test error %:")
    print(f"{'':<28}{'CIFAR-10':>10}{'CIFAR-100':>11}{'IN16-120':>10}")
    for name, (a, b, c) in THESIS.items():
        print(f"{name:<28}{a:>10.2f}{b:>11.2f}{c:>10.2f}")
    print(
        f"\nsearch seconds per seed: {[r['search_seconds'] for r in rows]}, "
        f"NES-RS seconds per seed: {[r['nes_rs_seconds'] for r in rows]}, "
        f"total per seed: {[r['seconds'] for r in rows]}"
    )


if __name__ == "__main__":
    raise SystemExit(main())

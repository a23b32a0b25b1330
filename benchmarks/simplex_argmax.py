"""Does arg max alpha recover the shared-weight best? Roberts, Liang & Sala's claims, measured.

Four parts, each printed as a table:

1. fixtures (the paper's two-layer setting, float64, realizable labels ``y = g alpha``):
   per number of candidates h, over ``--trials`` random draws (activation set from a
   library of nine, weight scale U(0.5, 3), alpha ~ Dirichlet(1)): how often arg max is
   the shared best, how often Condition 6 certifies it (Theorem 7), how often Theorem 7 is
   violated (must be 0) and how often the exact margins (E2) agree with the truth (must be
   all);
2. the near-duplicate case {relu, tanh, leaky_relu(0.1)} at alpha = (0.3, 0.4, 0.3) and
   the pre-search fragility of a few candidate sets;
3. real searches (``simplex`` strategy, squared loss, act-mlp with one mixed layer before
   the head, a two-layer teacher with a random simplex point, ``--steps`` full-batch
   steps, EG and softmax): how often arg max equals the measured shared-weight best, for
   h = 2 and h = 3, how many misses the report explains (near-duplicates named, or the top
   two weights within 0.05), and how far from exact the identity is (E7's residual);
4. ``nasforge search --space act-mlp --strategy simplex --dataset digits`` settings:
   every parameterisation and mode on digits (defaults otherwise), search seconds,
   the derived network's accuracy with inherited weights, and the diagnostic's verdicts.

    python benchmarks/simplex_argmax.py              # about three minutes on one thread
    python benchmarks/simplex_argmax.py --quick      # fewer trials and searches
"""

from __future__ import annotations

import argparse
import random
import time

import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.seeding import seeded_generator
from nasforge.run.builtin_datasets import load_digits
from nasforge_simplex.act_mlp_space import ActMlpSpace
from nasforge_simplex.consistency import consistency_report
from nasforge_simplex.strategy import SimplexSearch
from nasforge_simplex.two_layer import OpSetCheck, draw_two_layer, op_set_report

LIBRARY = ("relu", "leaky_relu", "tanh", "sigmoid", "softplus", "elu", "gelu", "swish", "identity")
SEARCH_LIBRARY = ("relu", "tanh", "sigmoid", "leaky_relu", "elu", "softplus")


def dirichlet(h: int, seed: int) -> torch.Tensor:
    e = -torch.log(torch.rand(h, generator=seeded_generator(seed), dtype=torch.float64))
    return e / e.sum()


def fixtures(trials: int) -> None:
    print(f"1. fixtures: realizable labels, {trials} draws per h (k=10, d=32, n=2000, float64)")
    print(
        f"{'h':>3} {'arg max = best':>15} {'Cond. 6 certifies':>18} {'Thm 7 violations':>17} {'E2 exact':>9}"
    )
    for h in (2, 3, 4, 5):
        match = certified = violations = exact = 0
        for t in range(trials):
            rng = random.Random(1000 * h + t)
            ops = tuple(rng.sample(LIBRARY, h))
            net = draw_two_layer(k=10, d=32, n=2000, scale=rng.uniform(0.5, 3.0), seed=1000 * h + t)
            g = net.outputs(ops)
            alpha = dirichlet(h, seed=t)
            r = consistency_report(g, alpha, ops, targets=g @ alpha, fragility_draws=100)
            match += r.match
            certified += r.certified
            exact += r.exact_ok == r.match
            violations += sum(
                r.condition6[i][j] and not r.alpha[j] < r.alpha[i] for i in range(h) for j in range(h)
            )
        print(
            f"{h:>3} {match / trials:>15.3f} {certified / trials:>18.3f} "
            f"{violations:>17d} {exact / trials:>9.3f}"
        )
    print()


def near_duplicates() -> None:
    print(
        "2. near-duplicates: {relu, tanh, leaky_relu(0.1)}, alpha = (0.3, 0.4, 0.3), k=20, d=64, s=2, n=1e5"
    )
    net = draw_two_layer(k=20, d=64, n=100_000, scale=2.0, seed=0)
    ops = ("relu", "tanh", "leaky_relu")
    g = net.outputs(ops)
    alpha = torch.tensor([0.3, 0.4, 0.3], dtype=torch.float64)
    r = consistency_report(g, alpha, ops, targets=g @ alpha)
    print(f"   L = {tuple(round(x, 4) for x in r.losses)}, D = {tuple(round(x, 3) for x in r.D)}")
    print(f"   arg max {ops[r.argmax]}, shared best {ops[r.shared_best]}: {r.verdict}")
    for w in r.warnings:
        print(f"   warning: {w}")
    print("   pre-search check (uniform alpha, k=20, d=64, s=2, n=2e4):")
    print(f"   {'candidate set':<42} {'fragility':>9} {'CV':>6}  near-duplicates")
    for ops in (
        ("relu", "tanh", "sigmoid"),
        ("relu", "leaky_relu", "elu"),
        ("relu", "tanh", "leaky_relu"),
        ("relu", "tanh", "leaky_relu", "sigmoid", "swish"),
    ):
        s = op_set_report(ops, check=OpSetCheck())
        dups = ", ".join(f"{d.first}~{d.second}" for d in s.near_duplicates) or "-"
        print(f"   {'{' + ', '.join(ops) + '}':<42} {s.fragility:>9.3f} {s.equidistance_cv:>6.2f}  {dups}")
    print()


def teacher(seed: int, ops: tuple[str, ...]) -> TensorData:
    net = draw_two_layer(k=10, d=64, n=2000, scale=1.5, seed=seed)
    alpha = dirichlet(len(ops), seed + 100)
    y = net.outputs(ops) @ alpha
    return TensorData("teacher", net.x.float(), y.float(), 1)


def searches(seeds: int, steps: int) -> None:
    print(
        f"3. real searches: simplex (first order, squared loss, {steps} full-batch steps), "
        f"act-mlp with one mixed layer before the head, a two-layer teacher, {seeds} seeds"
    )
    print(
        f"{'param.':<8} {'h':>2} {'arg max = best':>15} {'misses flagged':>15} "
        f"{'median identity residual':>25} {'s/search':>9}"
    )
    for parameterisation, lr in (("eg", 1.0), ("softmax", 0.05)):
        for h in (2, 3):
            match = flagged = 0
            residuals = []
            start = time.perf_counter()
            for seed in range(seeds):
                ops = tuple(random.Random(seed).sample(SEARCH_LIBRARY, h))
                s = SimplexSearch(
                    seed=seed,
                    progress=False,
                    parameterisation=parameterisation,
                    arch_lr=lr,
                    loss="squared",
                    epochs=steps,
                    batch_size=1000,
                    w_lr=0.02,
                    supernet={"in_features": 10},
                    rank_candidates=0,
                    eval_every=steps,
                )
                (r,) = s.fit(ActMlpSpace(layers=1, ops=ops), teacher(seed, ops)).produced_by["diagnostic"]
                match += r["match"]
                top = sorted(r["alpha"], reverse=True)
                # a miss the report explains: near-duplicates named, or a near-tie in alpha
                flagged += not r["match"] and (bool(r["near_duplicates"]) or top[0] - top[1] < 0.05)
                residuals.append(r["identity_residual"])
            seconds = (time.perf_counter() - start) / seeds
            misses = seeds - match
            residual = sorted(residuals)[len(residuals) // 2]
            print(
                f"{parameterisation:<8} {h:>2} {match:>11}/{seeds:<3} {flagged:>11}/{misses:<3} "
                f"{residual:>25.3f} {seconds:>9.2f}"
            )
    print()


def digits(quick: bool) -> None:
    print("4. act-mlp on digits (3 layers, width 64, 20 epochs, seed 0): every parameterisation and mode")
    print(f"{'parameterisation':<17} {'mode':<13} {'s':>6} {'derived acc':>11} {'genotype':<28} verdicts")
    data = load_digits(seed=0)
    modes = ("first_order",) if quick else ("first_order", "second_order", "single_level")
    for parameterisation in ("eg", "softmax", "proj"):
        for mode in modes:
            start = time.perf_counter()
            s = SimplexSearch(seed=0, progress=False, parameterisation=parameterisation, mode=mode)
            outcome = s.fit(ActMlpSpace(), data)
            seconds = time.perf_counter() - start
            acc = outcome.best_result.objectives["derived_val_accuracy"]
            verdicts = outcome.produced_by["diagnostic_summary"]["verdicts"]
            text = ActMlpSpace().format(outcome.best)
            print(f"{parameterisation:<17} {mode:<13} {seconds:>6.2f} {acc:>11.3f} {text:<28} {verdicts}")
    print("derived acc: the derived network with inherited weights on the architecture split, which")
    print("single_level also trains on (not held out there).")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400, help="fixture draws per h")
    parser.add_argument("--seeds", type=int, default=40, help="real searches per h and parameterisation")
    parser.add_argument("--steps", type=int, default=100, help="full-batch steps of each real search")
    parser.add_argument("--quick", action="store_true", help="100 draws, 10 searches, first order only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    trials, seeds = (100, 10) if args.quick else (args.trials, args.seeds)
    start = time.perf_counter()
    fixtures(trials)
    near_duplicates()
    searches(seeds, args.steps)
    digits(args.quick)
    print(f"total {time.perf_counter() - start:.1f} s, torch {torch.__version__}, one thread")


if __name__ == "__main__":
    main()

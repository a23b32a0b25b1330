"""NESBS on MNIST-1D in the thesis's regime, against its URS-T baseline and trained baselines.

On digits NESBS could not be told from a random ensemble, and a review found why beyond
the data: the posterior was fitted for 60 Adam steps and stayed uniform, the supernet
ranked architectures at Spearman 0.11, the URS-T baseline was missing. Here, per seed,
on MNIST-1D's training split (its test split touched by no search or selection):

1. one NB201 supernet (``--C 8 --N 1``) trained ``--supernet-epochs`` on 70 % of it with
   uniform single paths; the posterior fitted for the thesis's 2,360 Adam steps on the
   other 30 % (the selection split), its entropy recorded beside the uniform prior's;
2. the supernet check: ``--pool`` uniform architectures trained from scratch on the 70 %
   split, Spearman of their supernet NLL with their selection-split error (thesis Table
   5.6, n = 1: 0.65);
3. the Fig. 5.3 analogue (all seeds): for each sampler (URS-T, NESBS-MC, NESBS-SVGD-RD at
   every delta of our grid (-0.75 to 1), and "auto", the best over the grid, which scores
   6 T candidates), T = 1 ..
   ``--budgets`` candidate ensembles of n = 3, the one with the lowest selection-split NLL
   kept; its ensemble NLL estimated with supernet weights on the test split, against T;
   beside it the single best architecture of the same T x n uniform ones;
4. trained members (``--trained-seeds``), at the equal budget T = ``--T`` (T x n = 15
   architectures scored by the supernet): NESBS-SVGD-RD (delta 0), NESBS-MC, URS-T,
   DeepEns (the best of URS-T's 15 by supernet NLL, three initialisations) and top-k (the
   3 best of those 15), plus NES-RS (forward selection on the selection split from the
   pool of step 2, which is trained, so its budget is its pool). Every member is trained
   from scratch for ``--member-epochs`` on the whole training split (the same member
   trained once, so methods are paired), its test predictions kept; an ensemble averages
   its members' softmax.

Printed: test NLL (the primary figure) and error of each method with a 95 % interval over
seeds; NESBS minus each baseline as a paired per-example bootstrap pooled over seeds (95 %
interval of the mean difference in test NLL and in error); the Fig. 5.3 table; the
posterior's entropy and the supernet check per seed; the thesis's figures beside them.
Records are kept in ``--runs`` keyed by settings and code version.

    OMP_NUM_THREADS=1 nice -n 15 python benchmarks/nesbs_mnist1d.py --calibrate 50 400  # supernet length
    OMP_NUM_THREADS=1 nice -n 15 python benchmarks/nesbs_mnist1d.py                     # 10 + 5 seeds
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import torch
from records import RecordFile, code_version

from nasforge import get_registry
from nasforge.kernel.datasets import load_dataset, network_options
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet, supernet_option_names
from nasforge.tools.scoring import spearman
from nasforge_nb201 import OP_NAMES
from nasforge_nesbs.config import DELTA_GRID, NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding, Assignment
from nasforge_nesbs.estimation import combine, prob_scores
from nasforge_nesbs.member_training import MemberTraining, predict_logits, train_member
from nasforge_nesbs.posterior_fit import near_uniform
from nasforge_nesbs.search import run_nesbs, sample_candidate, supernet_predictor
from nasforge_nesbs.supernet_quality import THESIS_SPEARMAN, check_supernet

THESIS = {  # Table 5.1, NB201, n = 3, test error %, mean over 3 trials (C10 / C100 / IN16-120)
    "NESBS (SVGD-RD)": (5.92, 25.00, 52.68),
    "NESBS (MC Sampling)": (5.76, 25.39, 53.47),
    "NES-RS": (5.83, 25.58, 54.34),
    "DeepEns": (5.75, 25.27, 54.70),
}
#: NB201 operations without trained weights.
PARAMETER_FREE = frozenset({"none", "skip_connect", "avg_pool_3x3"})
TRAINED = ("nesbs-svgd", "nesbs-mc", "urs-t", "deepens", "top-k", "nes-rs")
LABELS = {
    "nesbs-svgd": "NESBS (SVGD-RD, delta 0)",
    "nesbs-mc": "NESBS (MC)",
    "urs-t": "URS-T (uniform, same selection)",
    "deepens": "DeepEns (best of T*n, 3 inits)",
    "top-k": "top-3 of T*n by supernet NLL",
    "nes-rs": "NES-RS (pool trained, forward sel.)",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=10, help="seeds 0..S-1 of the Fig. 5.3 analogue")
    p.add_argument("--trained-seeds", type=int, default=5, help="the first K seeds also train members")
    p.add_argument("--C", type=int, default=8)
    p.add_argument("--N", type=int, default=1)
    p.add_argument(
        "--supernet-epochs",
        type=int,
        default=400,
        help="400 ranks (seed 0: Spearman 0.68, thesis 0.65); 50 does not (0.17 over 10 seeds)",
    )
    p.add_argument("--posterior-steps", type=int, default=None, help="default: the thesis's 2,360")
    p.add_argument("--member-epochs", type=int, default=8)
    p.add_argument("--pool", type=int, default=16, help="architectures of the supernet check and NES-RS")
    p.add_argument("--budgets", type=int, default=20, help="largest T of the Fig. 5.3 analogue")
    p.add_argument("--T", type=int, default=5, help="candidates of the trained comparison (thesis: 5)")
    p.add_argument("--n", type=int, default=3, help="ensemble size")
    p.add_argument("--runs", type=Path, default=Path("runs/nesbs-mnist1d"))
    p.add_argument(
        "--bn",
        nargs="+",
        default=["batch"],
        choices=["batch", "recalibrate"],
        help="BatchNorm when the supernet scores (the thesis is silent); with --calibrate each is checked "
        "on one supernet",
    )
    p.add_argument("--first-seed", type=int, default=0, help="with --calibrate: start at this seed")
    p.add_argument(
        "--calibrate",
        type=int,
        nargs="+",
        default=None,
        metavar="EPOCHS",
        help="only the supernet check for each supernet length (no test data touched)",
    )
    args = p.parse_args(argv)
    if len(args.bn) > 1 and not args.calibrate:
        p.error("several --bn modes compare on one supernet with --calibrate only")
    if args.trained_seeds > args.seeds or args.budgets < args.T or min(args.n, args.T, args.pool) < 2:
        p.error("need trained-seeds <= seeds, T <= budgets, and n, T, pool >= 2")
    return args


class Seed:
    """One seed's trained supernet and posterior, and what is scored with them."""

    def __init__(self, seed: int, args: argparse.Namespace, supernet_epochs: int) -> None:
        registry = get_registry()
        self.seed, self.args = seed, args
        self.space = registry.space("nb201")
        self.search = load_dataset("mnist1d", registry=registry)
        self.test = load_dataset("mnist1d", registry=registry, train=False)
        extra = {} if args.posterior_steps is None else {"posterior_steps": args.posterior_steps}
        self.config = NesbsConfig(
            seed=seed,
            supernet={"C": args.C, "N": args.N},
            supernet_epochs=supernet_epochs,
            iterations=args.T,
            ensemble_size=args.n,
            bn=args.bn[0],
            **extra,
        )
        options = dict(self.config.supernet) | network_options(
            self.search.input_shape, 10, accepted=supernet_option_names(self.space)
        )
        supernet = seeded_build(lambda: self.space.supernet(**options), seed)
        self.encoding = ArchEncoding(as_supernet(supernet, by="benchmark"))
        start = time.perf_counter()
        self.run = run_nesbs(supernet, self.encoding, self.search, self.config)
        self.search_seconds = time.perf_counter() - start
        assert self.run.predictor is not None
        self.selection = self.run.predictor
        self.train70, _ = self.search.split(self.config.split, seed=seed)
        self.on_test = supernet_predictor(supernet, self.encoding, self.test, self.train70, self.config)

    def quality(self):
        return check_supernet(
            self.space,
            self.encoding,
            self.selection,
            self.train70,
            count=self.args.pool,
            epochs=self.args.member_epochs,
            seed=self.seed,
            build_options={"C": self.args.C, "N": self.args.N},
        )

    def candidates(self, sampler: str, delta: float, count: int, stream: int) -> list[list[Assignment]]:
        """``count`` candidate ensembles of one sampler, from a generator of its own."""
        config = NesbsConfig(seed=self.seed, sampler=sampler, delta=delta, ensemble_size=self.args.n)
        generator = torch.Generator().manual_seed(self.seed * 1009 + stream)
        return [sample_candidate(self.run.posterior, config, generator, delta=delta) for _ in range(count)]

    def best_of(self, candidates: list[list[Assignment]]) -> list[Assignment]:
        return min(candidates, key=lambda c: (self.selection.ensemble_scores(c)["nll"], candidates.index(c)))


def figure_53(seed: Seed) -> dict[str, Any]:
    """Per sampler and T: the selected ensemble's selection NLL and estimated test NLL/error."""
    args = seed.args
    streams = {"urs-t": ("uniform", 0.0), "nesbs-mc": ("mc", 0.0)}
    streams |= {f"svgd {d:+.2f}": ("svgd-rd", d) for d in DELTA_GRID}
    drawn = {name: seed.candidates(s, d, args.budgets, k) for k, (name, (s, d)) in enumerate(streams.items())}
    out: dict[str, Any] = {}
    for name, cands in [*drawn.items(), ("svgd auto (6T)", None)]:
        rows = []
        for t in range(1, args.budgets + 1):
            if cands is None:  # the best over every delta's first t candidates (t * 6 of them)
                pool = [c for k, v in drawn.items() if k.startswith("svgd ") for c in v[:t]]
            else:
                pool = cands[:t]
            best = seed.best_of(pool)
            rows.append(_estimated(seed, best))
        out[name] = rows
    singles = [a for c in drawn["urs-t"] for a in c]  # URS-T's architectures, T * n of them
    out["single best"] = [
        _estimated(seed, [min(singles[: t * args.n], key=lambda a: seed.selection.member_scores(a)["nll"])])
        for t in range(1, args.budgets + 1)
    ]
    return {"curves": out, "drawn": {k: [[list(a) for a in c] for c in v] for k, v in drawn.items()}}


def _estimated(seed: Seed, members: list[Assignment]) -> dict[str, float]:
    test = seed.on_test.ensemble_scores(members)
    return {
        "selection_nll": seed.selection.ensemble_scores(members)["nll"],
        "test_nll": test["nll"],
        "test_error": test["error"],
    }


def forward_select(logits: list[torch.Tensor], y: torch.Tensor, size: int) -> list[int]:
    """NES's ForwardSelect: add the pool member that most lowers the ensemble's NLL on ``y``
    (distinct members; ties to the lower index)."""
    chosen: list[int] = []
    for _ in range(min(size, len(logits))):
        rest = [i for i in range(len(logits)) if i not in chosen]
        best = min(rest, key=lambda i: (prob_scores(combine([logits[j] for j in [*chosen, i]]), y)["nll"], i))
        chosen.append(best)
    return chosen


def trained(seed: Seed, figure: dict[str, Any], quality) -> dict[str, Any]:
    """Members trained from scratch for each method at the equal budget T; per-example test scores."""
    args = seed.args
    decode = lambda c: [tuple(a) for a in c]  # noqa: E731
    urs = [decode(c) for c in figure["drawn"]["urs-t"][: args.T]]
    singles = list(dict.fromkeys(a for c in urs for a in c))
    ranked = sorted(singles, key=lambda a: (seed.selection.member_scores(a)["nll"], singles.index(a)))
    held = seed.selection.data
    ensembles = {
        "nesbs-svgd": seed.best_of([decode(c) for c in figure["drawn"]["svgd +0.00"][: args.T]]),
        "nesbs-mc": seed.best_of([decode(c) for c in figure["drawn"]["nesbs-mc"][: args.T]]),
        "urs-t": seed.best_of(urs),
        "deepens": [ranked[0]] * args.n,
        "top-k": ranked[: args.n],
        "nes-rs": [quality.members[i] for i in forward_select(list(quality.logits), held.y, args.n)],
    }
    recipe = MemberTraining(epochs=args.member_epochs)
    cache: dict[tuple[str, int], torch.Tensor] = {}

    def logits(a: Assignment, occurrence: int) -> torch.Tensor:
        text = seed.space.format(seed.encoding.genotype(a))
        if (text, occurrence) not in cache:
            member_seed = (
                seed.seed * 100_003
                + int(hashlib.sha256(text.encode()).hexdigest()[:6], 16)
                + 7919 * occurrence
            )
            model = train_member(
                seed.space, seed.encoding.genotype(a), seed.search, seed=member_seed, recipe=recipe,
                build_options={"C": args.C, "N": args.N},
            )  # fmt: skip
            cache[(text, occurrence)] = predict_logits(model, seed.test.x)
        return cache[(text, occurrence)]

    y = seed.test.y
    out = {}
    for name, members in ensembles.items():
        outs = [logits(a, members[:i].count(a)) for i, a in enumerate(members)]
        probs = combine(outs)
        per_nll = -probs.clamp_min(1e-12).log().gather(1, y[:, None]).squeeze(1)
        out[name] = {
            "members": [seed.space.format(seed.encoding.genotype(a)) for a in members],
            "nll": float(per_nll.mean()),
            "error": 100.0 * float((probs.argmax(1) != y).double().mean()),
            "per_example_nll": [round(float(v), 6) for v in per_nll],
            "per_example_wrong": [int(v) for v in (probs.argmax(1) != y)],
            "member_errors": [100.0 * float((o.argmax(1) != y).double().mean()) for o in outs],
            "supernet_selection_nll": seed.selection.ensemble_scores(members)["nll"],
        }
    return {"methods": out, "trained_members": len(cache)}


def run_seed(index: int, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    seed = Seed(index, args, args.supernet_epochs)
    entropy, prior, flat = near_uniform(seed.run.posterior)
    figure = figure_53(seed)
    quality = seed.quality() if index < args.trained_seeds else None
    record: dict[str, Any] = {
        "seed": index,
        "posterior": {"entropy": entropy, "prior": prior, "near_uniform": flat},
        "search_seconds": round(seed.search_seconds, 1),
        "supernet_log": [dict(e) for e in seed.run.supernet_log][-1:],
        "figure": figure["curves"],
        "drawn": figure["drawn"],
    }
    if quality is not None:
        record["quality"] = quality.to_json()
        record["trained"] = trained(seed, figure, quality)
    record["seconds"] = round(time.perf_counter() - start, 1)
    print(
        f"seed {index}: posterior entropy {entropy:.2f}/{prior:.2f}, "
        + (f"supernet check Spearman {quality.spearman:.2f}, " if quality is not None else "")
        + (
            ", ".join(
                f"{k} NLL {v['nll']:.3f} err {v['error']:.2f}%"
                for k, v in record["trained"]["methods"].items()
            )
            if quality is not None
            else ""
        )
        + f" ({record['seconds']:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    return record


def recorded_pool(index: int, args: argparse.Namespace) -> dict[str, Any] | None:
    """The supernet check's trained pool of seed ``index`` from a record of this code
    version with the same pool settings, if one exists: the pool (architectures, their
    training and their selection-split scores) does not depend on the supernet's length."""
    code = code_version("nasforge", "nasforge_nesbs", "nasforge_nb201")
    path = args.runs / "records.jsonl"
    if not path.exists():
        return None
    for row in RecordFile(path, code).records():
        s = row.get("settings", {})
        same = all(s.get(k) == getattr(args, k) for k in ("C", "N", "pool", "member_epochs"))
        if s.get("seed") == index and same and "quality" in row:
            return row["quality"]
    return None


def calibrate(args: argparse.Namespace) -> None:
    """The supernet check at each supernet length, selection split only (the trained pool
    does not depend on the supernet, so it is trained once per seed, or read from a record)."""
    for index in range(args.first_seed, args.seeds):
        pool = recorded_pool(index, args)
        for epochs in args.calibrate:
            seed = Seed(index, args, epochs)
            if pool is None:
                pool = seed.quality().to_json()
            members = [tuple(a) for a in pool["members"]]
            accuracy = seed.run.supernet_log[-1]["accuracy"] if seed.run.supernet_log else math.nan
            entropy, prior, _ = near_uniform(seed.run.posterior)
            for bn in args.bn:  # the same supernet scoring with each BatchNorm mode
                config = attrs.evolve(seed.config, bn=bn)
                predictor = supernet_predictor(
                    seed.selection.supernet, seed.encoding, seed.selection.data, seed.train70, config
                )
                supernet_nll = [predictor.member_scores(a)["nll"] for a in members]
                rho = spearman(supernet_nll, list(pool["trained_error"]))
                rho_nll = spearman(supernet_nll, list(pool["trained_nll"]))
                print(
                    f"seed {index}, supernet {epochs} epochs (last-epoch training accuracy "
                    f"{100 * accuracy:.1f} %), bn {bn}: Spearman(supernet NLL, trained error) "
                    f"{rho:.2f} (vs trained NLL {rho_nll:.2f}) over {len(members)} "
                    f"architectures trained {pool['epochs']} epochs; posterior entropy {entropy:.2f} of "
                    f"{prior:.2f} ({seed.search_seconds:.0f} s)",
                    flush=True,
                )


def parameter_free_percent(ops: Iterable[str]) -> float:
    """Percentage of parameter-free NB201 operations among ``ops`` (a posterior fitted to a
    weak supernet drifts towards them: they need no trained weights)."""
    ops = list(ops)
    return 100.0 * sum(op in PARAMETER_FREE for op in ops) / max(1, len(ops))


def parameter_free_share(candidates_per_seed: Iterable[list[list[list[int]]]]) -> float:
    """:func:`parameter_free_percent` of the members of the sampled candidates (op indices)."""
    return parameter_free_percent(
        OP_NAMES[i] for cands in candidates_per_seed for c in cands for member in c for i in member
    )


def interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and a 95 % t interval over seeds."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan, math.nan
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(
        len(values), 2.0
    )
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def paired_bootstrap(
    rows: list[dict], a: str, b: str, key: str, draws: int = 2000
) -> tuple[float, float, float]:
    """Mean over every test example of every seed of (a - b) per-example ``key``, and a 95 %
    bootstrap interval resampling examples within each seed (pooled over seeds)."""
    diffs = []
    for r in rows:
        x, y = r["trained"]["methods"][a][key], r["trained"]["methods"][b][key]
        diffs.append([float(p) - float(q) for p, q in zip(x, y, strict=True)])
    flat = [d for seed in diffs for d in seed]
    rng = random.Random(0)
    means = []
    for _ in range(draws):
        total = 0.0
        for seed in diffs:
            total += sum(seed[rng.randrange(len(seed))] for _ in range(len(seed)))
        means.append(total / len(flat))
    means.sort()
    scale = 100.0 if key == "per_example_wrong" else 1.0
    return (
        scale * statistics.fmean(flat),
        scale * means[int(0.025 * draws)],
        scale * means[int(0.975 * draws) - 1],
    )


def report(rows: list[dict], args: argparse.Namespace, code: str) -> None:
    space = get_registry().space("nb201")  # reads the members' text
    print(
        f"\nNESBS on MNIST-1D (NB201 supernet C={args.C} N={args.N}, {args.supernet_epochs} "
        "supernet epochs on 70 % "
        f"of the 4,000 training sequences, posterior {args.posterior_steps or 2360} Adam steps on "
        "the other 30 %, "
        f"n={args.n}); code {code}"
    )
    for r in rows:
        q = r.get("quality")
        print(
            f"  seed {r['seed']}: posterior entropy {r['posterior']['entropy']:.2f} of "
            f"{r['posterior']['prior']:.2f} nats"
            + (" (near uniform)" if r["posterior"]["near_uniform"] else "")
            + (f"; supernet check Spearman {q['spearman']:.2f} over {len(q['members'])} archs" if q else "")
            + f"; {r['seconds']:.0f} s"
        )
    checks = [r["quality"]["spearman"] for r in rows if "quality" in r]
    if checks:
        m, lo, hi = interval(checks)
        print(
            f"  supernet check, mean Spearman {m:.2f} [{lo:.2f}, {hi:.2f}] (thesis Table 5.6, n = "
            f"1: {THESIS_SPEARMAN})"
        )
    names = list(rows[0]["figure"])
    budgets = [t for t in (1, 2, 3, 5, 10, 15, 20, 30, 50) if t <= args.budgets]
    print(
        f"\nFig. 5.3 analogue, {len(rows)} seeds: ensemble NLL estimated with supernet weights on "
        "the test split "
        "of the candidate kept by selection-split NLL, against T candidates (T x n "
        "architectures); mean ± s.e."
    )
    print(f"{'sampler':<16}" + "".join(f"{'T=' + str(t):>15}" for t in budgets))
    for name in names:
        cells = []
        for t in budgets:
            values = [r["figure"][name][t - 1]["test_nll"] for r in rows]
            se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
            cells.append(f"{statistics.fmean(values):>8.3f} ± {se:.3f}")
        print(f"{name:<16}" + "".join(f"{c:>15}" for c in cells))
    print(
        "(thesis Fig. 5.3, DARTS/CIFAR-10 with supernet weights: SVGD-RD < MC < NES-RS, URS at equal budget)"
    )
    print(
        "Parameter-free operations (none, skip, avg-pool; 3 of 5, 60 % under the uniform prior) among "
        "the sampled members, all candidates of all seeds: "
        + ", ".join(
            f"{name} {parameter_free_share(r['drawn'][name] for r in rows):.0f} %"
            for name in ("urs-t", "nesbs-mc", "svgd +0.00")
        )
    )
    trained_rows = [r for r in rows if "trained" in r]
    if not trained_rows:
        return
    print(
        f"\nTrained members ({len(trained_rows)} seeds; each member {args.member_epochs} epochs "
        "from scratch on the "
        f"4,000 training sequences; T={args.T}, T x n = {args.T * args.n} architectures scored by "
        "the supernet; "
        f"NES-RS: pool of {args.pool} trained on 70 %): test NLL and error % on the 1,000 test sequences, "
        "mean [95 % interval over seeds]"
    )
    print(
        f"{'method':<38}{'test NLL':>26}{'test error %':>26}{'members error %':>18}{'param-free ops %':>18}"
    )
    for m in TRAINED:
        nll = interval([r["trained"]["methods"][m]["nll"] for r in trained_rows])
        err = interval([r["trained"]["methods"][m]["error"] for r in trained_rows])
        members = statistics.fmean(
            e for r in trained_rows for e in r["trained"]["methods"][m]["member_errors"]
        )
        free = parameter_free_percent(
            op
            for r in trained_rows
            for text in r["trained"]["methods"][m]["members"]
            for op in space.parse(text).choices
        )
        print(
            f"{LABELS[m]:<38}{nll[0]:>10.4f} [{nll[1]:.4f}, {nll[2]:.4f}]{err[0]:>10.2f} "
            f"[{err[1]:.2f}, {err[2]:.2f}]"
            f"{members:>18.2f}{free:>18.0f}"
        )
    print(
        "\nNESBS (SVGD-RD) minus each baseline, paired per-example bootstrap pooled over seeds "
        "(95 % interval):"
    )
    for other in TRAINED[1:]:
        d_nll = paired_bootstrap(trained_rows, "nesbs-svgd", other, "per_example_nll")
        d_err = paired_bootstrap(trained_rows, "nesbs-svgd", other, "per_example_wrong")
        print(
            f"  vs {LABELS[other]:<38} NLL {d_nll[0]:+.4f} [{d_nll[1]:+.4f}, {d_nll[2]:+.4f}]"
            f"   error {d_err[0]:+.2f} [{d_err[1]:+.2f}, {d_err[2]:+.2f}] points"
        )
    print("  (negative: NESBS better; an interval across 0: the test set cannot tell them apart)")
    print("\nThesis Table 5.1 (NAS-Bench-201 at GPU scale, members 200 epochs), test error %:")
    for name, (a, b, c) in THESIS.items():
        print(f"  {name:<22} C10 {a:.2f}  C100 {b:.2f}  IN16-120 {c:.2f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    if args.calibrate:
        calibrate(args)
        return 0
    code = code_version("nasforge", "nasforge_nesbs", "nasforge_nb201")
    records = RecordFile(args.runs / "records.jsonl", code)
    rows = []
    for index in range(args.seeds):
        settings = {
            "seed": index,
            "trained": index < args.trained_seeds,
            "bn": args.bn[0],
            **{
                k: getattr(args, k)
                for k in (
                    "C",
                    "N",
                    "supernet_epochs",
                    "posterior_steps",
                    "member_epochs",
                    "pool",
                    "budgets",
                    "T",
                    "n",
                )
            },
        }
        found = records.records([settings])
        rows.append(found[0] if found else records.append(settings, run_seed(index, args)))
    report(rows, args, code)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

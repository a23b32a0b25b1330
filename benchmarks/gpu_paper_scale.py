"""The training-free methods at their papers' scale on NAS-Bench-201, on a GPU, resumable.

The rows (5 initialisation seeds, CIFAR-10, CIFAR-100 and ImageNet16-120, test accuracy of
the chosen cell under the benchmark protocol: a search observes validation accuracy, the
chosen cell's test accuracy is reported), each beside the paper's figure and beside random
search with the same number of table queries (its expectation over 100 seeds):

* ``eigennas``: Eigen-NAS, both readings of its score (``eigennas_trace``, the trace of the
  loss-gradient Gram; ``eigennas_ntk_trace``, of the output NTK) and KNAS (``knas``), each
  ranking all 15,625 cells (C=16, N=5, 3x32x32 Gaussian inputs, 50 samples, as
  ``eigennas_nb201.py`` scores its pool), the best validation accuracy of its top k, k=20
  and k=5;
* ``hnas``: HNAS at its code's scale (M_Trace and kappa on the code's kernel, C=16, N=5,
  3x32x32, batch 64) with its growing pool (the ``thesis`` preset: 2,000 cells, 2,000 more
  each time), 20 BO steps on CIFAR-10, the chosen cell reported on all three datasets;
* ``prerank``: each of the six zero-cost proxies (grad_norm, snip, grasp, fisher,
  jacob_cov, synflow) and their rank ensemble ranking all 15,625 cells (C=16, N=5,
  3x32x32, batch 64, as ``nasforge score`` builds them), the best validation of the top 10.

A whole-space score that does not fit one sitting continues in the next: scores go to a
score cache under ``--state``, whose contents are packed at the end of every sitting (and
when ``--time-limit`` runs out) into at most ``--max-files`` ``.tar.gz`` files of at most
15 MiB in ``--out`` (what a GPU machine's run can copy back), and unpacked from
``--resume`` at the start of the next. A row is recorded (``<out>/paper_scale.jsonl``,
keyed by its settings and the code's version) once its scores are complete; recorded rows
are not run again.

    python benchmarks/gpu_paper_scale.py --out $OUT --time-limit 420 [--resume DIR]
    python benchmarks/gpu_paper_scale.py --device cpu --small --out /tmp/ps    # a CPU test
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge.tools.scoring import RankingSettings, rank_pool, sample_genotypes
from nasforge_eigennas import ScoreSettings, score_candidates
from nasforge_nb201.space import NB201Space
from nasforge_nb201.table import load_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import RecordFile, code_version  # noqa: E402

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
EIGEN = ("eigennas_trace", "eigennas_ntk_trace", "knas")
SIX = ("grad_norm", "snip", "grasp", "fisher", "jacob_cov", "synflow")
PACKAGES = ("nasforge", "nasforge_nb201", "nasforge_zerocost", "nasforge_eigennas", "nasforge_hnas")
#: The papers' figures (test accuracy; CIFAR-10, CIFAR-100, ImageNet16-120), for the rows.
PAPER = {
    "eigennas k=20": (93.46, 71.42, 45.54),  # Eigen-NAS Table 2 (Zhu et al., NeurIPS 2022)
    "eigennas k=5": (93.43, 69.92, 45.53),
    "knas k=20": (93.38, 70.78, 44.63),  # KNAS's own numbers, as the Eigen-NAS paper quotes them
    "hnas": (94.07, 72.30, 45.93),  # HNAS thesis Table 7.3 (M_Trace)
}
#: Published CIFAR-10 figures beside the pre-ranking rows (another protocol; the papers' own figures).
PRERANK_PUBLISHED = "NASI 93.55, Eigen-NAS 93.46, TE-NAS 93.9, HNAS 94.07, RoBoT (hybrid) 94.36"


@attrs.frozen
class Scale:
    name: str
    cells: int | None  # None: all 15,625
    build: dict[str, int]
    input_shape: tuple[int, int, int]
    eigen_batch: int
    batch: int
    seeds: int
    random_seeds: int
    hnas_steps: int
    hnas_pool: int


FULL = Scale("full", None, {"C": 16, "N": 5}, (3, 32, 32), 50, 64, 5, 100, 20, 2000)
SMALL = Scale("small", 24, {"C": 4, "N": 1}, (3, 8, 8), 4, 8, 1, 5, 3, 12)


class OutOfTime(Exception):
    """This sitting's time is up: what was scored stays in the cache for the next."""


class Sitting:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.scale = SMALL if args.small else FULL
        self.end = None if args.time_limit is None else time.perf_counter() + args.time_limit
        self.space = NB201Space()
        self.table = load_table()
        self.cache = args.state / "scores"
        self.records = RecordFile(args.out / "paper_scale.jsonl", code_version(*PACKAGES))
        everything = list(self.space.enumerate())
        self.cells = (
            everything if self.scale.cells is None else sample_genotypes(self.space, self.scale.cells)
        )
        self.index = [self.space.index_of(g) for g in self.cells]

    def progress(self, done: int, total: int, *_: Any) -> None:
        if self.end is not None and time.perf_counter() > self.end:
            raise OutOfTime(f"time limit reached at {done}/{total} cells")

    def left(self) -> float:
        return float("inf") if self.end is None else self.end - time.perf_counter()

    # --- the protocol ------------------------------------------------------------------------
    def chosen(self, order: Sequence[int], k: int, dataset: str) -> float:
        """Test accuracy of the best-validation cell among the first ``k`` of ``order``."""
        top = list(order[:k])
        best = max(top, key=lambda i: self.table.value("valid_accuracy", i, dataset))
        return float(self.table.accuracy_of(best, dataset))

    def random_row(self, k: int, search: str | None = None) -> dict[str, float]:
        """Random search with ``k`` queries, its expectation over the random seeds: per dataset
        (or one search on ``search``, its cell reported on every dataset)."""
        out: dict[str, list[float]] = {d: [] for d in DATASETS}
        everything = range(len(self.table.codes))
        for seed in range(self.scale.random_seeds):
            picked = random.Random(seed).sample(everything, k)
            for d in DATASETS:
                on = search or d
                best = max(picked, key=lambda i, on=on: self.table.value("valid_accuracy", i, on))
                out[d].append(float(self.table.accuracy_of(best, d)))
        return {d: statistics.fmean(v) for d, v in out.items()}

    def ranked(self, values: Sequence[float], higher: bool = True) -> list[int]:
        """Table indices best first; NaN and inf last (flagged scores never lead)."""

        def key(i: int) -> tuple[int, float]:
            v = values[i]
            ok = v == v and abs(v) != float("inf")
            return (0 if ok else 1, -v if (ok and higher) else (v if ok else 0.0))

        return [self.index[i] for i in sorted(range(len(values)), key=key)]


def eigennas(s: Sitting, seed: int) -> dict[str, Any]:
    sc = s.scale
    settings = ScoreSettings(
        metric=EIGEN[0],
        data="gaussian",
        batch_size=sc.eigen_batch,
        input_shape=sc.input_shape,
        num_classes=10,
        build=dict(sc.build),
        init_seed=seed,
        device=s.args.device,
    )
    start = time.perf_counter()
    table = score_candidates(
        s.space,
        s.cells,
        settings,
        metrics=list(EIGEN[1:]),
        cache=str(s.cache),
        progress=lambda done, total: s.progress(done, total),
    )
    out: dict[str, Any] = {"seed": seed, "wall": time.perf_counter() - start, "cells": len(s.cells)}
    for metric, k in itertools.product(EIGEN, (20, 5)):
        order = s.ranked(table.values(metric).tolist())
        out[f"{metric} k={k}"] = {d: s.chosen(order, k, d) for d in DATASETS}
        out[f"{metric} seconds"] = sum(float(r[metric].seconds) for r in table.rows)
    return out


def prerank(s: Sitting, seed: int) -> dict[str, Any]:
    sc = s.scale
    out: dict[str, Any] = {"seed": seed, "cells": len(s.cells)}
    start = time.perf_counter()
    for name, metrics in [*((m, (m,)) for m in SIX), ("ensemble of the six", SIX)]:
        settings = RankingSettings(
            metrics=metrics,
            seeds=(seed,),
            data="gaussian",
            batch_size=sc.batch,
            build=dict(sc.build),
            device=s.args.device,
        )
        ranking = rank_pool(
            s.space,
            s.cells,
            settings,
            cache=str(s.cache),
            progress=lambda done, total, *_: s.progress(done, total),
        )
        order = [s.space.index_of(g) for g in ranking.genotypes]
        out[name] = {d: s.chosen(order, 10, d) for d in DATASETS}
    out["wall"] = time.perf_counter() - start
    return out


def hnas(s: Sitting, seed: int) -> dict[str, Any]:
    from nasforge.run.budget import Budget
    from nasforge.run.experiment import Experiment
    from nasforge.run.spec import ExperimentSpec
    from nasforge_hnas import Hnas
    from nasforge_nb201.evaluator import NB201TableEvaluator

    sc = s.scale
    options = {
        "steps": sc.hnas_steps,
        "preset": "thesis",
        "pool_size": sc.hnas_pool,
        "pool_growth": sc.hnas_pool,
        "input_shape": list(sc.input_shape),
        "num_classes": 10,
        "build": dict(sc.build),
        "batch_size": sc.batch,
        "kernel_output": "target",
        "kernel_bn": "decomposed",
        "kernel_params": "layers",
        "device": s.args.device,
        "cache": str(s.args.state / "hnas-pool.jsonl"),
    }
    evaluator = NB201TableEvaluator(s.space, dataset="cifar10")
    strategy = Hnas(s.space, objective=evaluator.objective, seed=seed, **options)
    spec = ExperimentSpec(
        space=s.space.name,
        strategy=Hnas.name,
        evaluator=evaluator.name,
        benchmark_dataset="cifar10",
        budget=Budget(trials=sc.hnas_steps),
        seed=seed,
        strategy_options=options,
    )
    start = time.perf_counter()
    result = Experiment(s.space, strategy, evaluator, spec, progress=False).run()
    index = s.space.index_of(result.best)
    return {
        "seed": seed,
        "wall": time.perf_counter() - start,
        "pool_members": len(strategy.pool),
        "hnas": {d: float(s.table.accuracy_of(index, d)) for d in DATASETS},
    }


ROWS: dict[str, Callable[[Sitting, int], dict[str, Any]]] = {
    "eigennas": eigennas,
    "prerank": prerank,
    "hnas": hnas,
}


def report(s: Sitting) -> None:
    records = s.records.records()
    print(
        f"\nNAS-Bench-201 at the papers' scale ({s.scale.name}: {len(s.cells)} cells), test accuracy of "
        "the chosen cell, mean over seeds; random search: the same queries, 100-seed expectation"
    )
    print(f"{'row':<42} | {'CIFAR-10':>9} | {'CIFAR-100':>9} | {'IN16-120':>9} | seeds | paper")
    for row in ROWS:
        mine = [r for r in records if r["settings"]["row"] == row]
        if not mine:
            print(f"{row:<42} | (not complete yet)")
            continue
        labels = [k for k, v in mine[0].items() if isinstance(v, dict) and set(v) == set(DATASETS)]
        for label in labels:
            means = [statistics.fmean(r[label][d] for r in mine) for d in DATASETS]
            paper = PAPER.get(
                label.replace("eigennas_ntk_trace", "eigennas").replace("eigennas_trace", "eigennas")
            )
            print(
                f"{label:<42} | "
                + " | ".join(f"{m:9.2f}" for m in means)
                + f" | {len(mine):5} | "
                + ("-" if paper is None else " / ".join(f"{p:.2f}" for p in paper))
            )
        for k in (20, 5) if row == "eigennas" else (10,) if row == "prerank" else (s.scale.hnas_steps,):
            rand = s.random_row(k, "cifar10" if row == "hnas" else None)
            print(f"{f'random search, {k} queries':<42} | " + " | ".join(f"{rand[d]:9.2f}" for d in DATASETS))
    print(f"(pre-ranking rows beside published CIFAR-10 figures: {PRERANK_PUBLISHED})")


def unpack(source: Path, cache: Path) -> int:
    """The cache files of an earlier sitting, from its ``.tar.gz`` files."""
    n = 0
    for archive in sorted(source.glob("paper-scale-state-*.tar.gz")):
        with tarfile.open(archive) as tar:
            tar.extractall(cache.parent, filter="data")
        n += 1
    return n


def pack(state: Path, out: Path, max_files: int, limit: int = 15 * 2**20) -> list[Path]:
    """The state's files into at most ``max_files`` ``.tar.gz`` files of about ``limit`` bytes
    each (written whole, then renamed); an older packing's files are replaced."""
    files = sorted(p for p in state.rglob("*") if p.is_file() and not p.name.startswith("."))
    groups: list[list[Path]] = [[]]
    size = 0
    for f in files:  # JSON lines compress ~5x: a group of 5 * limit raw bytes is ~limit packed
        if groups[-1] and size + f.stat().st_size > 5 * limit:
            groups.append([])
            size = 0
        groups[-1].append(f)
        size += f.stat().st_size
    if len(groups) > max_files:
        raise RuntimeError(f"the state needs {len(groups)} files, more than --max-files {max_files}")
    for old in out.glob("paper-scale-state-*.tar.gz"):
        old.unlink()
    written = []
    for i, group in enumerate(g for g in groups if g):
        target = out / f"paper-scale-state-{i}.tar.gz"
        tmp = target.with_suffix(".part")
        with tarfile.open(tmp, "w:gz") as tar:
            for f in group:
                tar.add(f, arcname=str(f.relative_to(state.parent)))
        tmp.rename(target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--small", action="store_true", help="a small sample and networks (a CPU test)")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of: {', '.join(ROWS)}")
    parser.add_argument("--out", type=Path, default=Path("runs/paper-scale"))
    parser.add_argument("--state", type=Path, default=None, help="the score cache (default: <out>/state)")
    parser.add_argument(
        "--resume", type=Path, default=None, help="unpack an earlier sitting's state from here"
    )
    parser.add_argument("--time-limit", type=float, default=None, help="seconds for this sitting's scoring")
    parser.add_argument("--max-files", type=int, default=6, help="state archives at most (the rest: records)")
    args = parser.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    if any(r not in ROWS for r in rows):
        print(
            f"--rows: unknown {', '.join(r for r in rows if r not in ROWS)} (known: {', '.join(ROWS)})",
            file=sys.stderr,
        )
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(
            "no CUDA device here: run with --device cpu --small, or on a machine with a CUDA GPU",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    args.state = args.state or args.out / "state"
    (args.state / "scores").mkdir(parents=True, exist_ok=True)
    if args.resume is not None:
        print(f"resumed from {unpack(args.resume, args.state / 'scores')} archive(s) in {args.resume}")
    torch.set_num_threads(1)
    s = Sitting(args)
    stopped = False
    try:
        for row, seed in itertools.product(rows, range(s.scale.seeds)):
            settings = {"row": row, "seed": seed, "scale": s.scale.name, "cells": len(s.cells)}
            if s.records.has(settings):
                continue
            if s.left() <= 0:
                raise OutOfTime("time limit reached")
            print(f"== {row}, seed {seed}", flush=True)
            record = ROWS[row](s, seed)
            s.records.append(settings, record)
            print({k: v for k, v in record.items() if not isinstance(v, dict)}, flush=True)
    except OutOfTime as exc:
        stopped = True
        print(f"stopped: {exc}; the scores so far are in the state, continue with --resume {args.out}")
    finally:
        written = pack(args.state, args.out, args.max_files)
        print(f"state packed into {len(written)} file(s) in {args.out}")
    report(s)
    return 3 if stopped else 0


if __name__ == "__main__":
    raise SystemExit(main())

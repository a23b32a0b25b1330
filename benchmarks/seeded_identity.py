"""Seeded runs of each strategy family, recorded to JSON and compared: the check that a
change to how a run builds its components (not what they compute) leaves every seeded
result identical.

    python benchmarks/seeded_identity.py --record before.json   # on the old code
    python benchmarks/seeded_identity.py --compare before.json  # on the new code

What it runs, through the Python API a host program uses: black-box strategies on the
bundled NAS-Bench-201 table (rea, random, local, nsga2 on two objectives, optuna-tpe if
Optuna is installed), multi-fidelity ones on the toy evaluator (sh, hyperband, median),
pool-scoring ones (prerank, eigennas, hnas on small pools, in-process and on a 2-worker
process pool), an evaluator that trains (short-train on digits, with ``device="cpu"``),
one-shot strategies on digits for a few steps (darts, nasi), and ``score`` of a few cells
under a few metrics; and on the declared spaces (toy, act-mlp, mlp-res), black-box
strategies on the toy evaluator, one-shot ones (simplex, darts, nasi) and short training on
act-mlp and mlp-res.
``--only NAME ...`` runs (and compares) only those runs. Each run's trials (genotype,
fidelity, objectives) and best are recorded; ``--compare`` prints the runs that differ
(exit 1) or "N/N runs identical".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("NASFORGE_PLUGINS", "nasforge.kernel.testing.toy")

import torch  # noqa: E402

from nasforge import api  # noqa: E402
from nasforge.kernel.outcome import SearchOutcome  # noqa: E402
from nasforge.kernel.registry import get_registry  # noqa: E402
from nasforge.tools.scoring import score_genotypes  # noqa: E402

TINY_POOL = {"cache": False, "build": {"C": 4, "N": 1}}
DARTS_TINY = {"supernet": {"C": 4, "N": 1}, "epochs": 2, "max_batches": 2, "batch_size": 16}
NASI_TINY = {"steps": 6, "batch_size": 16, "calibration_samples": 4, "supernet": {"C": 4, "N": 1}}
HNAS_TINY = {
    "steps": 6,
    "pool_size": 24,
    "batch_size": 16,
    "input_shape": [3, 8, 8],
    "build": {"C": 4, "N": 1},
}
ACT_MLP_TINY = {"epochs": 2, "max_batches": 3, "batch_size": 16, "supernet": {"width": 8}}
SIMPLEX_TINY = {**ACT_MLP_TINY, "rank_candidates": 3, "diagnostic_samples": 16}
EIGEN_TINY = {
    "sample_size": 12, "top_k": 3, "cache": False, "build": {"C": 4, "N": 1}, "input_shape": [3, 8, 8],
    "score_data": "gaussian",
}  # fmt: skip


def _number(value: Any) -> Any:
    """Floats as their repr (NaN and infinities included), so equality is exact."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return value


def _outcome(out: SearchOutcome) -> dict[str, Any]:
    return {
        "best": str(out.best),
        "trials": [
            [str(t.genotype), t.fidelity, {k: _number(v) for k, v in sorted(t.result.objectives.items())}]
            for t in out.history
        ],
        "front": [str(t.genotype) for t in (out.front or ())],
    }


def _search(*args: Any, **kwargs: Any) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            return _outcome(api.search(*args, run_dir=Path(tmp) / "run", **kwargs))

    return run


def _score() -> dict[str, Any]:
    space = api.load_space("nb201")
    cells = [space.sample(__import__("random").Random(i)) for i in range(4)]
    table = score_genotypes(
        space,
        cells,
        ["synflow", "grad_norm", "params", "naswot"],
        batch_size=8,
        seed=2,
        build={"C": 4, "N": 1},
    )
    return {"rows": [{name: _number(cell.value) for name, cell in sorted(row.items())} for row in table.rows]}


def runs() -> dict[str, Callable[[], dict[str, Any]]]:
    table = {"benchmark_dataset": "cifar10", "trials": 40, "seed": 3}
    found: dict[str, Callable[[], dict[str, Any]]] = {
        "rea": _search("nb201", "rea", "nb201-table", **table),
        "random": _search("nb201", "random", "nb201-table", **table),
        "local": _search("nb201", "local", "nb201-table", **table),
        "nsga2": _search(
            "nb201",
            "nsga2",
            "nb201-table",
            objectives=["valid_accuracy:max", "latency_ms:min"],
            strategy_options={"population_size": 8},
            **table,
        ),  # fmt: skip
        "rea-process-2": _search(
            "nb201", "rea", "nb201-table", executor="process", workers=2, **{**table, "trials": 12}
        ),
        "sh-toy": _search("toy", "sh", "toy-epochs", trials=30, seed=1, evaluator_options={"epochs": 9}),
        "hyperband-toy": _search("toy", "hyperband", "toy-epochs", trials=30, seed=1),
        "median-toy": _search(
            "toy", "median", "toy-epochs", trials=20, seed=1, strategy_options={"strategy": "random"}
        ),
        "prerank": _search(
            "nb201",
            "prerank",
            "nb201-table",
            trials=20,
            seed=3,
            strategy_options={"metric": "params", "top_k": 5, "pool": 40, **TINY_POOL},
        ),  # fmt: skip
        "prerank-then-rea": _search(
            "nb201",
            "prerank",
            "nb201-table",
            trials=12,
            seed=4,
            strategy_options={"metric": "synflow", "top_k": 4, "pool": 16, "then": "rea", **TINY_POOL},
        ),  # fmt: skip
        "prerank-process-2": _search(
            "nb201",
            "prerank",
            "nb201-table",
            trials=10,
            seed=3,
            executor="process",
            workers=2,
            strategy_options={"metric": "synflow", "top_k": 3, "pool": 12, **TINY_POOL},
        ),  # fmt: skip
        "hnas-build-options": _search(
            "nb201",
            "hnas",
            "nb201-table",
            trials=4,
            seed=1,
            build_options={"C": 4, "N": 1},
            strategy_options={k: v for k, v in HNAS_TINY.items() if k != "build"},
        ),  # fmt: skip
        "eigennas": _search(
            "nb201", "eigennas", "nb201-table", trials=10, seed=0, strategy_options=EIGEN_TINY
        ),
        "hnas": _search("nb201", "hnas", "nb201-table", trials=6, seed=0, strategy_options=HNAS_TINY),
        "short-train-cpu": _search(
            "nb201",
            "random",
            "short-train",
            train_data="digits",
            trials=3,
            seed=5,
            device="cpu",
            evaluator_options={"epochs": 1},
            build_options={"C": 4, "N": 1},
        ),  # fmt: skip
        "darts": _search("nb201", "darts", train_data="digits", seed=1, strategy_options=DARTS_TINY),
        "rea-toy": _search("toy", "rea", "toy", trials=30, seed=2, strategy_options={"population_size": 6}),
        "local-toy": _search("toy", "local", "toy", trials=20, seed=2),
        "nsga2-toy": _search(
            "toy",
            "nsga2",
            "toy",
            trials=24,
            seed=2,
            objectives=["score:max", "size:min"],
            strategy_options={"population_size": 6},
        ),  # fmt: skip
        "simplex-act-mlp": _search(
            "act-mlp", "simplex", train_data="digits", seed=1, strategy_options=SIMPLEX_TINY
        ),
        "darts-act-mlp": _search(
            "act-mlp", "darts", train_data="digits", seed=1, strategy_options=ACT_MLP_TINY
        ),
        "nasi-act-mlp": _search(
            "act-mlp",
            "nasi",
            train_data="digits",
            seed=1,
            strategy_options={"steps": 4, "batch_size": 16, "supernet": {"width": 8}},
        ),  # fmt: skip
        "eigennas-mlp-res": _search(
            "mlp-res",
            "eigennas",
            "short-train",
            train_data="digits",
            trials=3,
            seed=0,
            device="cpu",
            evaluator_options={"epochs": 1},
            build_options={"width": 16},
            strategy_options={"sample_size": 12, "top_k": 3, "cache": False},
        ),  # fmt: skip
        "rea-mlp-res": _search(
            "mlp-res",
            "rea",
            "short-train",
            train_data="digits",
            trials=4,
            seed=2,
            device="cpu",
            evaluator_options={"epochs": 1},
            build_options={"width": 16},
            strategy_options={"population_size": 2, "sample_size": 2},
        ),  # fmt: skip
        "darts-mlp-res": _search(
            "mlp-res",
            "darts",
            train_data="digits",
            seed=1,
            strategy_options={**ACT_MLP_TINY, "supernet": {"width": 8}},
        ),  # fmt: skip
        "short-train-act-mlp": _search(
            "act-mlp",
            "random",
            "short-train",
            train_data="digits",
            trials=3,
            seed=5,
            device="cpu",
            evaluator_options={"epochs": 1},
            build_options={"width": 16},
        ),  # fmt: skip
        "nasi": _search("nb201", "nasi", train_data="digits", seed=1, strategy_options=NASI_TINY),
        "score": _score,
    }
    if importlib.util.find_spec("optuna") is not None:
        found["optuna-tpe"] = _search("nb201", "optuna-tpe", "nb201-table", **table)
        found["optuna-tpe-toy"] = _search("toy", "optuna-tpe", "toy", trials=20, seed=2)
        found["optuna-tpe-mlp-res"] = _search(
            "mlp-res", "optuna-tpe", "short-train", train_data="digits", trials=3, seed=5, device="cpu",
            evaluator_options={"epochs": 1}, build_options={"width": 16},
        )  # fmt: skip
        found["optuna-tpe-act-mlp"] = _search(
            "act-mlp", "optuna-tpe", "short-train", train_data="digits", trials=3, seed=5, device="cpu",
            evaluator_options={"epochs": 1}, build_options={"width": 16},
        )  # fmt: skip
    return found


def record(only: list[str] | None = None) -> dict[str, Any]:
    torch.set_num_threads(1)
    get_registry()
    out: dict[str, Any] = {}
    for name, run in runs().items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        out[name] = run()
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only these runs (names as recorded)")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", type=Path, help="write the runs' results to this JSON file")
    group.add_argument("--compare", type=Path, help="compare the runs' results with this JSON file")
    args = parser.parse_args(argv)
    if args.compare is not None and not args.compare.is_file():
        print(f"error: no such file: {args.compare}", file=sys.stderr)
        return 2
    results = record(args.only)
    if args.record is not None:
        tmp = args.record.with_suffix(args.record.suffix + ".tmp")
        tmp.write_text(json.dumps(results, indent=1, sort_keys=True))
        tmp.replace(args.record)
        print(f"{len(results)} runs recorded in {args.record}")
        return 0
    before = json.loads(args.compare.read_text())
    if args.only:
        before = {k: v for k, v in before.items() if k in args.only}
    differ = sorted(k for k in before.keys() | results.keys() if before.get(k) != results.get(k))
    for name in differ:
        print(f"differs: {name}")
    same = len(before.keys() | results.keys()) - len(differ)
    print(f"{same}/{len(before.keys() | results.keys())} runs identical")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
